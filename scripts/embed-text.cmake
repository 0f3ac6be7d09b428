# cmake -DIN=file -DOUT=file.c -DSYMBOL=name -P embed-text.cmake
# Turns a text file into `const char SYMBOL[]` (NUL-terminated) and SYMBOL_len.
file(READ ${IN} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE ${OUT} "/* generated from ${IN}; do not edit */\n#include <stddef.h>\nconst char ${SYMBOL}[] = {${bytes} 0x00};\nconst size_t ${SYMBOL}_len = sizeof ${SYMBOL} - 1;\n")
