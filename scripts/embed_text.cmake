# Writes OUT, a C++ file defining `extern const char SYMBOL[]` with IN's text.
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "namespace ccreplay {\nextern const char ${SYMBOL}[];\nconst char ${SYMBOL}[] = R\"ccreplay_embed(${CONTENT})ccreplay_embed\";\n}  // namespace ccreplay\n")
