#include <cstdio>
int main() { std::puts("ferry: CLI under construction"); return 0; }
