# Which GPU architectures the CUDA code is compiled for when the user chose
# none. No GPU may be present at build time, so "native" cannot be used.
#
# Real code (SASS) for every family pcieval targets, so that no GPU depends
# on the driver's PTX JIT: a node with CUDA_DISABLE_PTX_JIT=1 (some hardened
# images set it) cannot JIT, and a Blackwell part running only Hopper PTX
# would then fail every launch. PTX of Hopper (compute_90, the "90" entry)
# stays for parts newer than the list (JIT where it is allowed).
#   75 Turing, 80 Ampere, 90 Hopper, 100 Blackwell datacenter (B200, GB200),
#   120 Blackwell workstation/consumer (RTX PRO 6000, RTX 5090).
# CUDA 13 no longer builds for Volta and older; 100 and 120 need CUDA 12.8.
#
# A user's choice wins: -DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS
# environment variable (which CMake itself reads into
# CMAKE_CUDA_ARCHITECTURES when the CUDA language is enabled, but only if
# the variable is not already set, so this must not set it then).

# Sets `out` to the default list for nvcc version `nvcc_version` ("13.0.88"),
# or to "" when the user's choice (cache variable or CUDAARCHS) must be kept.
# `user_archs`: CMAKE_CUDA_ARCHITECTURES as the user passed it (may be empty);
# `env_archs`: $ENV{CUDAARCHS} (may be empty).
function(pcieval_default_cuda_architectures out nvcc_version user_archs env_archs)
  if(NOT "${user_archs}" STREQUAL "" OR NOT "${env_archs}" STREQUAL "")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  set(archs 75-real 80-real 90)
  if(NOT "${nvcc_version}" STREQUAL "" AND "${nvcc_version}" VERSION_GREATER_EQUAL 12.8)
    list(APPEND archs 100-real 120-real)
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# The nvcc version without enabling the language (enable_language would fix
# CMAKE_CUDA_ARCHITECTURES first).
function(pcieval_nvcc_version out nvcc)
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE text ERROR_QUIET RESULT_VARIABLE failed)
  set(version "")
  if(NOT failed AND text MATCHES "release [0-9.]+, V([0-9.]+)")
    set(version "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()
