# vkqc_embed(OUT SYMBOL FILES): writes a .cc defining
#   const vkqc::EmbeddedFile SYMBOL[]; const size_t SYMBOL_count;
# with each file's base name and bytes, so the compiler carries shaders and profiles inside.
function(vkqc_embed out symbol files)
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} "-DFILES=${files_arg}"
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${files} ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "embed ${symbol}"
    VERBATIM)
endfunction()
