// ir/text_lexer.h — tokens and spelling rules of the textual IR (ir/text_format.h).
//
// Shared by the printer and the parser so that what one writes the other reads:
// which names may stay bare, how strings are escaped, how numbers are spelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::text {

enum class Tok : uint8_t {
  kEnd,        ///< end of input
  kIdent,      ///< bare word [A-Za-z_][A-Za-z0-9_]*: ops, dtypes, keywords, attribute names, symbols
  kNumber,     ///< 12, -3, 1.5e-05, -inf, -nan (bare inf / nan are kIdent)
  kString,     ///< "..." (text holds the decoded bytes)
  kValue,      ///< %name or %"quoted name" (text holds the name)
  kNodeName,   ///< @name or @"quoted name" (text holds the name)
  kPunct,      ///< one of ( ) [ ] { } , = : ? * < >
  kArrow,      ///< ->
  kBackArrow,  ///< <-
  kError,      ///< lexical error; text holds the message
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  int line = 1;
  int column = 1;

  bool is(Tok k) const { return kind == k; }
  bool is_punct(char c) const { return kind == Tok::kPunct && text.size() == 1 && text[0] == c; }
  bool is_ident(std::string_view w) const { return kind == Tok::kIdent && text == w; }
  /// How the token reads in an error message: `'('`, `%x`, `end of input`.
  std::string describe() const;
};

/// Splits text IR into tokens. Skips blanks and `//` comments. Never fails hard:
/// bad input yields a kError token with a message.
class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  Token next();

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  bool at_end() const { return pos_ >= src_.size(); }
  void advance();
  void skip_blanks();
  Token lex_string(Token t);
  Token lex_name(Token t, Tok kind);

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

/// [A-Za-z_][A-Za-z0-9_]*: graph names, attribute names and dim symbols print bare when true.
bool is_bare_word(std::string_view s);
/// [A-Za-z0-9_.:/-]+ not ending in ':': value and node names print bare after %/@ when true.
bool is_bare_name(std::string_view s);
/// "..." with \" \\ \n \t \r and \xHH for other control bytes; other bytes (UTF-8) stay as they are.
std::string quote(std::string_view s);
std::string word_or_quoted(std::string_view s);
std::string name_or_quoted(std::string_view s);

/// Shortest text that reads back to the same value: 0.1, 1e-05, inf, -inf, nan, -nan, -0.
std::string format_float(float f);
std::string format_double(double d);
/// Exact readers for number tokens; nullopt when the text is not (entirely) a number
/// of that type or out of its range. Accept inf, -inf, nan and -nan for floats.
std::optional<float> parse_float(std::string_view s);
std::optional<double> parse_double(std::string_view s);
std::optional<int64_t> parse_int64(std::string_view s);
std::optional<uint64_t> parse_uint64(std::string_view s);

}  // namespace ferry::text
