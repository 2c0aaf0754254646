# cmake -DINPUT=FILE -DOUTPUT=HEADER -DSYMBOL=NAME -P embed_text.cmake
# Writes HEADER declaring `inline constexpr char NAME[]` holding FILE's text, so
# that a program carries the file instead of looking for it at run time.
file(READ ${INPUT} content)
set(delimiter "aotc_embedded")
if(content MATCHES "\\)${delimiter}\"")
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
file(WRITE ${OUTPUT}.tmp "// Generated from ${INPUT} by cmake/embed_text.cmake. Do not edit.\n#pragma once\n\n"
     "inline constexpr char ${SYMBOL}[] = R\"${delimiter}(${content})${delimiter}\";\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
