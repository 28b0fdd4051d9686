# ccreplay_library(NAME [LTO] DEPS dep...): one static library per folder,
# made of every .cc in it, linking its lower layers publicly; LTO marks the
# layers an event runs through, compiled for link-time optimisation of
# ccreplay and the benchmarks (CMakeLists.txt, CCREPLAY_LTO). The dependency
# order is the one of docs/architecture.md; tests/layering_check.cmake keeps
# the includes honest.
function(ccreplay_library name)
  cmake_parse_arguments(ARG "LTO" "" "DEPS;EXCLUDE" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  foreach(ex ${ARG_EXCLUDE})
    list(REMOVE_ITEM srcs ${CMAKE_CURRENT_SOURCE_DIR}/${ex})
  endforeach()
  add_library(ccreplay_${name} ${srcs} ${ARG_UNPARSED_ARGUMENTS})
  target_include_directories(ccreplay_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(ccreplay_${name} PUBLIC ${ARG_DEPS})
  if(ARG_LTO)
    target_compile_options(ccreplay_${name} PRIVATE ${CCREPLAY_LTO_COMPILE})
  endif()
endfunction()
