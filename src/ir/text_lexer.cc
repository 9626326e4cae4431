#include "ir/text_lexer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ferry::text {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_word_char(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
bool is_name_char(char c) {
  return is_word_char(c) || c == '.' || c == ':' || c == '/' || c == '-';
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string char_text(char c) {
  if (c >= 0x21 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", unsigned(static_cast<unsigned char>(c)));
  return buf;
}

// Splits an optional leading '-' off an inf/nan spelling; returns the magnitude word.
std::string_view strip_minus(std::string_view s, bool* negative) {
  *negative = !s.empty() && s[0] == '-';
  return *negative ? s.substr(1) : s;
}

template <class F>
std::optional<F> parse_floating(std::string_view s) {
  bool neg = false;
  std::string_view mag = strip_minus(s, &neg);
  if (mag == "inf") return neg ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
  if (mag == "nan") return std::copysign(std::numeric_limits<F>::quiet_NaN(), neg ? F(-1) : F(1));
  // from_chars would also take "infinity", "NAN" and friends; keep the language small.
  for (char c : mag)
    if (!(is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return std::nullopt;
  F v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class F>
std::string format_floating(F f) {
  if (std::isnan(f)) return std::signbit(f) ? "-nan" : "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, f);  // shortest round-trip form
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}

template <class I>
std::optional<I> parse_integer(std::string_view s) {
  I v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case Tok::kEnd: return "end of input";
    case Tok::kString: return quote(text);
    case Tok::kValue: return "%" + name_or_quoted(text);
    case Tok::kNodeName: return "@" + name_or_quoted(text);
    case Tok::kError: return "invalid token";
    default: return "'" + text + "'";
  }
}

void Lexer::advance() {
  if (at_end()) return;
  if (src_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

void Lexer::skip_blanks() {
  while (!at_end()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (!at_end() && peek() != '\n') advance();
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  skip_blanks();
  Token t;
  t.line = line_;
  t.column = column_;
  if (at_end()) return t;  // kEnd
  char c = peek();
  if (c == '"') {
    return lex_string(std::move(t));
  }
  if (c == '%' || c == '@') {
    advance();
    return lex_name(std::move(t), c == '%' ? Tok::kValue : Tok::kNodeName);
  }
  if (c == '-' && peek(1) == '>') {
    advance();
    advance();
    t.kind = Tok::kArrow;
    t.text = "->";
    return t;
  }
  if (c == '<' && peek(1) == '-') {
    advance();
    advance();
    t.kind = Tok::kBackArrow;
    t.text = "<-";
    return t;
  }
  bool number_start = is_digit(c) || (c == '.' && is_digit(peek(1))) ||
                      (c == '-' && (is_word_char(peek(1)) || peek(1) == '.'));
  if (number_start) {
    // Greedy over what a number can be spelled with; the reader decides if it is one.
    t.kind = Tok::kNumber;
    t.text += c;
    advance();
    while (!at_end()) {
      char d = peek();
      char prev = t.text.back();
      bool exponent_sign = (d == '+' || d == '-') && (prev == 'e' || prev == 'E');
      if (!is_word_char(d) && d != '.' && !exponent_sign) break;
      t.text += d;
      advance();
    }
    return t;
  }
  if (is_alpha(c) || c == '_') {
    t.kind = Tok::kIdent;
    while (!at_end() && is_word_char(peek())) {
      t.text += peek();
      advance();
    }
    return t;
  }
  static constexpr std::string_view kPuncts = "()[]{},=:?*<>";
  if (kPuncts.find(c) != std::string_view::npos) {
    t.kind = Tok::kPunct;
    t.text = std::string(1, c);
    advance();
    return t;
  }
  t.kind = Tok::kError;
  t.text = "unexpected character " + char_text(c);
  return t;
}

Token Lexer::lex_string(Token t) {
  advance();  // opening quote
  t.kind = Tok::kString;
  while (true) {
    if (at_end() || peek() == '\n') {
      t.kind = Tok::kError;
      t.text = "unterminated string (strings end on the same line)";
      return t;
    }
    char c = peek();
    advance();
    if (c == '"') return t;
    if (c != '\\') {
      t.text += c;
      continue;
    }
    char e = peek();
    advance();
    switch (e) {
      case '"': t.text += '"'; break;
      case '\\': t.text += '\\'; break;
      case 'n': t.text += '\n'; break;
      case 't': t.text += '\t'; break;
      case 'r': t.text += '\r'; break;
      case 'x': {
        int hi = hex_value(peek()), lo = hex_value(peek(1));
        if (hi < 0 || lo < 0) {
          t.kind = Tok::kError;
          t.text = "\\x in a string needs two hex digits";
          return t;
        }
        advance();
        advance();
        t.text += char(hi * 16 + lo);
        break;
      }
      default:
        t.kind = Tok::kError;
        t.text = "unknown escape \\" + std::string(e ? std::string(1, e) : "") +
                 " in a string (use \\\" \\\\ \\n \\t \\r or \\xHH)";
        return t;
    }
  }
}

Token Lexer::lex_name(Token t, Tok kind) {
  const char* sigil = kind == Tok::kValue ? "%" : "@";
  if (peek() == '"') {
    Token s = lex_string(std::move(t));
    if (s.kind == Tok::kString) s.kind = kind;
    return s;
  }
  // A name may contain ':' but not end with it, so `%x: f32[2]` reads as name x.
  size_t end = pos_;
  while (end < src_.size() && is_name_char(src_[end])) ++end;
  while (end > pos_ && src_[end - 1] == ':') --end;
  if (end == pos_) {
    t.kind = Tok::kError;
    t.text = std::string("expected a name after '") + sigil + "' (bare [A-Za-z0-9_.:/-] or quoted)";
    return t;
  }
  t.kind = kind;
  while (pos_ < end) {
    t.text += peek();
    advance();
  }
  return t;
}

bool is_bare_word(std::string_view s) {
  if (s.empty() || is_digit(s[0])) return false;
  for (char c : s)
    if (!is_word_char(c)) return false;
  return true;
}

bool is_bare_name(std::string_view s) {
  if (s.empty() || s.back() == ':') return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string word_or_quoted(std::string_view s) { return is_bare_word(s) ? std::string(s) : quote(s); }
std::string name_or_quoted(std::string_view s) { return is_bare_name(s) ? std::string(s) : quote(s); }

std::string format_float(float f) { return format_floating(f); }
std::string format_double(double d) { return format_floating(d); }
std::optional<float> parse_float(std::string_view s) { return parse_floating<float>(s); }
std::optional<double> parse_double(std::string_view s) { return parse_floating<double>(s); }
std::optional<int64_t> parse_int64(std::string_view s) { return parse_integer<int64_t>(s); }
std::optional<uint64_t> parse_uint64(std::string_view s) { return parse_integer<uint64_t>(s); }

}  // namespace ferry::text
