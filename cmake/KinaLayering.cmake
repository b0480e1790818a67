# The layering rules of docs/design.md ("Layers"), checked when CMake
# configures, so a change that breaks them fails the build:
#  1. no library links (directly or not) one that it must not reach;
#  2. every Kina header a library's sources include belongs to that
#     library, to a header-only contract, or to a library it links.

# Which library owns each Kina header directory (or header). Headers not
# listed are header-only contracts anyone may include.
set(KINA_HEADER_OWNERS
  "Kina/API/Signature.h=KinaABI"
  "Kina/API/SharedLibrary.h=KinaRuntimeAPI"
  "Kina/API/Simulator.h=KinaRuntimeAPI"
  "Kina/API/Compiler.h=KinaCompilerAPI"
  "Kina/CPU/=KinaCPU"
  "Kina/Dialect/=MLIRKina"
  "Kina/Frontend/MLIRGen.h=KinaFrontend"
  "Kina/Frontend/=KinaFrontendSyntax"
  "Kina/Transforms/=KinaTransforms"
  "Kina/Conversion/=KinaToLinalg"
  "Kina/Pipelines/=KinaPipelines"
  "Kina/Sharding/=KinaSharding"
  "Kina/Target/=KinaTarget"
  "Kina/InitAll.h=KinaRegistration")

# `out`: every target `target` links, transitively (itself excluded).
function(kina_link_closure target out)
  set(pending ${target})
  set(seen)
  while(pending)
    list(POP_FRONT pending current)
    get_target_property(libs ${current} LINK_LIBRARIES)
    if(NOT libs)
      continue()
    endif()
    foreach(lib ${libs})
      if(TARGET ${lib} AND NOT lib IN_LIST seen)
        list(APPEND seen ${lib})
        list(APPEND pending ${lib})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Rule 1: `target` must not reach any of the libraries after FORBIDS.
function(kina_forbid_links target)
  cmake_parse_arguments(ARG "" "" "FORBIDS" ${ARGN})
  kina_link_closure(${target} closure)
  foreach(forbidden ${ARG_FORBIDS})
    if(forbidden IN_LIST closure)
      message(FATAL_ERROR "Layering: ${target} must not link ${forbidden} "
                          "(docs/design.md, Layers)")
    endif()
  endforeach()
endfunction()

# Rule 2 for one library.
function(kina_check_includes target)
  kina_link_closure(${target} closure)
  list(APPEND closure ${target})
  # add_mlir_library compiles the sources in an object library obj.NAME.
  set(compiled ${target})
  if(TARGET obj.${target})
    set(compiled obj.${target})
  endif()
  get_target_property(sources ${compiled} SOURCES)
  get_target_property(dir ${compiled} SOURCE_DIR)
  foreach(source ${sources})
    if(NOT IS_ABSOLUTE "${source}")
      set(source "${dir}/${source}")
    endif()
    if(NOT EXISTS "${source}" OR IS_DIRECTORY "${source}")
      continue()
    endif()
    file(STRINGS "${source}" includes REGEX "^#include \"Kina/")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      foreach(rule ${KINA_HEADER_OWNERS})
        string(REPLACE "=" ";" rule "${rule}")
        list(GET rule 0 prefix)
        list(GET rule 1 owner)
        string(FIND "${header}" "${prefix}" at)
        if(at EQUAL 0)
          if(NOT owner IN_LIST closure)
            message(FATAL_ERROR "Layering: ${source} (in ${target}) includes "
                                "${header}, which belongs to ${owner}, a "
                                "library ${target} does not link")
          endif()
          break()
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()

function(kina_check_layering)
  # The plain C++ contract and the loader: no MLIR, no compiler.
  set(compiler MLIR MLIRKina KinaFrontendSyntax KinaFrontend KinaSharding
      KinaTransforms
      KinaToLinalg KinaPipelines KinaTarget KinaCompilerAPI KinaRegistration)
  kina_forbid_links(KinaABI FORBIDS ${compiler})
  kina_forbid_links(KinaRuntimeAPI FORBIDS ${compiler})
  kina_forbid_links(kina-abi-check FORBIDS ${compiler})
  # The syntax half of the frontend knows no MLIR.
  kina_forbid_links(KinaFrontendSyntax FORBIDS MLIR MLIRKina)
  # What Kina knows of CPUs is plain C++, below the compiler.
  kina_forbid_links(KinaCPU FORBIDS ${compiler})
  # The dialect is below everything that compiles.
  kina_forbid_links(MLIRKina FORBIDS KinaFrontendSyntax KinaFrontend
                    KinaTransforms KinaToLinalg KinaPipelines KinaTarget
                    KinaSharding)
  # Sharding works on the dialect, in the global view, above nothing else.
  kina_forbid_links(KinaSharding FORBIDS KinaFrontendSyntax KinaFrontend
                    KinaTransforms KinaToLinalg KinaPipelines KinaTarget)
  kina_forbid_links(KinaTransforms FORBIDS KinaToLinalg KinaPipelines
                    KinaFrontend KinaTarget)
  kina_forbid_links(KinaToLinalg FORBIDS KinaPipelines KinaFrontend
                    KinaTarget)
  kina_forbid_links(KinaPipelines FORBIDS KinaFrontend KinaTarget)
  kina_forbid_links(KinaSharding FORBIDS KinaPipelines)
  # The target turns kina IR into an object; it never parses source.
  kina_forbid_links(KinaTarget FORBIDS KinaFrontendSyntax KinaFrontend
                    KinaCompilerAPI KinaRuntimeAPI KinaRegistration)
  foreach(library KinaABI KinaCPU KinaRuntimeAPI KinaCompilerAPI MLIRKina KinaSharding
          KinaFrontendSyntax KinaFrontend KinaTransforms KinaToLinalg
          KinaPipelines KinaTarget KinaRegistration)
    kina_check_includes(${library})
  endforeach()
endfunction()
