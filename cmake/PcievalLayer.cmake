# One library per folder of DESIGN.md's layout, and the arrows between them
# enforced by the build: each layer's headers are visible only to the targets
# that link it. The repository root is never an include directory; instead each
# layer gets a directory of its own under the build tree that holds one link,
# <layer> -> the source folder, so `#include "topology/x.hpp"` from validate/
# fails to compile because validate/ does not link topology.
function(pcieval_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;EXTERNAL" ${ARGN})
  set(include_root "${CMAKE_BINARY_DIR}/layer-include/${name}")
  file(MAKE_DIRECTORY "${include_root}")
  file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}" "${include_root}/${name}" SYMBOLIC)
  add_library(pcieval_${name} STATIC ${ARG_SOURCES})
  # A batch of a layer's files per compiler run: most of a TU's time is the
  # same standard, nlohmann and model/ headers (PCIEVAL_UNITY_BUILD).
  set_target_properties(pcieval_${name} PROPERTIES UNITY_BUILD ${PCIEVAL_UNITY_BUILD}
                                                   UNITY_BUILD_BATCH_SIZE ${PCIEVAL_UNITY_BATCH_SIZE})
  target_include_directories(pcieval_${name} PUBLIC "${include_root}")
  target_compile_options(pcieval_${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror=return-type>)
  foreach(dep IN LISTS ARG_DEPENDS)
    # PUBLIC: a layer's headers use its dependencies' types (model/ above all).
    target_link_libraries(pcieval_${name} PUBLIC pcieval_${dep})
  endforeach()
  if(ARG_EXTERNAL)
    target_link_libraries(pcieval_${name} PRIVATE ${ARG_EXTERNAL})
  endif()
endfunction()
