# cmake -DINPUT=file -DOUTPUT=file.inc -DNAME=symbol -P EmbedFile.cmake
# Writes `static const unsigned char NAME[] = {...};` holding INPUT's bytes.
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)"
       "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "/* Generated from ${INPUT} by cmake/EmbedFile.cmake. */\n"
     "static const unsigned char ${NAME}[] = {\n${bytes}};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
