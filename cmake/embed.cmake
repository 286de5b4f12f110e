# kiln_embed_files(TARGET name SYMBOL sym FILES f1 f2 ...)
# Generates a source file defining
#   const kiln::EmbeddedFile sym[]; const int sym_count;
# (see harness/common/embedded_file.h) with each file's base name and content, and adds it to
# TARGET. The files are re-embedded whenever they change.
function(kiln_embed_files)
  cmake_parse_arguments(E "" "TARGET;SYMBOL" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${E_SYMBOL}_embedded.cc)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${E_SYMBOL} "-DFILES=${E_FILES}"
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${E_FILES} ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${E_SYMBOL}"
    VERBATIM)
  target_sources(${E_TARGET} PRIVATE ${out})
endfunction()
