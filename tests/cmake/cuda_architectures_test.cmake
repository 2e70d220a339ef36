# The default CUDA architectures (cmake/PcievalCudaArchitectures.cmake), run
# with `cmake -DPCIEVAL_SOURCE_DIR=... -P`: Blackwell as real code once nvcc
# can build it, and a user's choice (the cache variable or CUDAARCHS) kept.
include("${PCIEVAL_SOURCE_DIR}/cmake/PcievalCudaArchitectures.cmake")

function(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: got '${got}', want '${want}'")
  endif()
  message(STATUS "ok: ${what}: '${got}'")
endfunction()

pcieval_default_cuda_architectures(archs "13.0.88" "" "")
expect("CUDA 13 default" "${archs}" "75-real;80-real;90;100-real;120-real")
foreach(arch 100-real 120-real)
  list(FIND archs ${arch} found)
  if(found EQUAL -1)
    message(FATAL_ERROR "CUDA 13 default lacks ${arch}: Blackwell would depend on the PTX JIT")
  endif()
endforeach()

pcieval_default_cuda_architectures(archs "12.8.61" "" "")
expect("CUDA 12.8 default" "${archs}" "75-real;80-real;90;100-real;120-real")

# Before 12.8 nvcc cannot build sm_100/sm_120: Hopper PTX covers them.
pcieval_default_cuda_architectures(archs "12.4.131" "" "")
expect("CUDA 12.4 default" "${archs}" "75-real;80-real;90")

# The user's choice: nothing is set, so CMake keeps theirs.
pcieval_default_cuda_architectures(archs "13.0.88" "" "90-real")
expect("CUDAARCHS set" "${archs}" "")
pcieval_default_cuda_architectures(archs "13.0.88" "80-real" "")
expect("-DCMAKE_CUDA_ARCHITECTURES set" "${archs}" "")
