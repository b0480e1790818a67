# The layering of docs/design.md ("Layers"), checked when CMake configures,
# so that a change that breaks it does not build. The tables in that
# section are the one list: this file reads them and checks the build
# against them.
#
# A row of a table there is
#   | `Target` | sources | `Kina/Dir/`, `Kina/Dir/File.h` | what | `Lower`, `MLIR` |
# (`(optional)` after the target: it may be left out of a configuration,
# such as the fuzzers without KINA_FUZZ). A row whose first cell says
# `header-only` lists headers anyone may include. The rules:
#  1. every library and program the project defines has a row, and every
#     row's target exists (unless optional);
#  2. a target links directly exactly the rows (and `MLIR`) its links cell
#     names, and only rows above its own: the tables list layers lowest
#     first;
#  3. every source of a target, every header in its sources' directories
#     and every public header it owns (its headers cell; the longest
#     prefix decides) includes Kina headers only of its own, of a target it
#     links directly, or header-only ones; a source that does not exist is
#     an error, and so is a header under include/Kina that no row owns.
#  4. a row that links no MLIR (neither `MLIR` nor, through the rows it
#     links, anything that does; nor an MLIR library of its own, such as
#     kina-tblgen's TableGen ones) includes no mlir/ header in those files;
#  5. the header-only headers include no mlir/ or llvm/ header: they are
#     the C ABI and plain C++ anyone may include.

# The cells of a table row `line`, trimmed, as a list.
function(_kina_row_cells line out)
  string(REGEX REPLACE "^\\|(.*)\\|[ \t]*$" "\\1" inner "${line}")
  string(REPLACE ";" "," inner "${inner}")
  string(REPLACE "|" ";" cells "${inner}")
  set(trimmed)
  foreach(cell ${cells})
    string(STRIP "${cell}" cell)
    list(APPEND trimmed "${cell}")
  endforeach()
  set(${out} "${trimmed}" PARENT_SCOPE)
endfunction()

# The `backticked` names of `cell`, as a list.
function(_kina_backticked cell out)
  string(REGEX MATCHALL "`[^`]+`" quoted "${cell}")
  set(names)
  foreach(name ${quoted})
    string(REPLACE "`" "" name "${name}")
    list(APPEND names "${name}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# Every target defined in `dir` and below.
function(_kina_targets_in dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    _kina_targets_in("${subdir}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

# The row that owns Kina header `header` (its longest prefix), or "".
function(_kina_header_owner header out)
  set(best "")
  set(best_length 0)
  foreach(rule ${KINA_LAYER_HEADERS})
    string(REPLACE "=" ";" rule "${rule}")
    list(GET rule 0 prefix)
    list(GET rule 1 owner)
    string(LENGTH "${prefix}" length)
    string(FIND "${header}" "${prefix}" at)
    if(at EQUAL 0 AND length GREATER best_length)
      set(best "${owner}")
      set(best_length ${length})
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

function(_kina_layering_error)
  string(JOIN "" text ${ARGN})
  message(FATAL_ERROR "Layering (${KINA_LAYER_DOC}, Layers): ${text}")
endfunction()

# Whether `file` includes a header under any of `prefixes` (such as mlir/):
# the first such header in `out`, or "".
function(_kina_system_include file prefixes out)
  string(JOIN "|" alternatives ${prefixes})
  file(STRINGS "${file}" includes
       REGEX "^#[ \t]*include[ \t]*[<\"](${alternatives})")
  set(found "")
  foreach(line ${includes})
    string(REGEX REPLACE "^#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1"
           found "${line}")
    break()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Rule 3 for one file of `target`, which may include the headers of
# `allowed` rows.
function(_kina_check_file target file allowed)
  file(STRINGS "${file}" includes REGEX "^#include \"Kina/")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    _kina_header_owner("${header}" owner)
    if(owner STREQUAL "")
      _kina_layering_error("${file} (in ${target}) includes ${header}, "
                           "which no row owns")
    endif()
    if(NOT owner IN_LIST allowed)
      _kina_layering_error("${file} (in ${target}) includes ${header}, which "
                           "belongs to ${owner}, a target ${target} does not "
                           "link directly")
    endif()
  endforeach()
endfunction()

# The files rule 3 reads for `target`: its sources (each must exist unless
# generated) and the headers beside them.
function(_kina_files_of target out)
  set(compiled ${target})
  # add_mlir_library compiles the sources in an object library obj.NAME.
  if(TARGET obj.${target})
    set(compiled obj.${target})
  endif()
  get_target_property(sources ${compiled} SOURCES)
  get_target_property(dir ${compiled} SOURCE_DIR)
  if(NOT sources)
    set(sources)
  endif()
  set(files)
  set(dirs)
  foreach(source ${sources})
    if(NOT IS_ABSOLUTE "${source}")
      set(source "${dir}/${source}")
    endif()
    get_source_file_property(generated "${source}" TARGET_DIRECTORY ${compiled}
                             GENERATED)
    if(generated OR source MATCHES "\\.(td|inc)$")
      continue()
    endif()
    if(NOT EXISTS "${source}" OR IS_DIRECTORY "${source}")
      _kina_layering_error("${target} lists the source ${source}, which does "
                           "not exist")
    endif()
    list(APPEND files "${source}")
    get_filename_component(source_dir "${source}" DIRECTORY)
    list(APPEND dirs "${source_dir}")
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  foreach(source_dir ${dirs})
    file(GLOB beside "${source_dir}/*.h")
    list(APPEND files ${beside})
  endforeach()
  list(REMOVE_DUPLICATES files)
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# kina_check_layering(DOC design.md INCLUDE_DIR include [ROOT dir])
function(kina_check_layering)
  cmake_parse_arguments(ARG "" "DOC;INCLUDE_DIR;ROOT" "" ${ARGN})
  if(NOT ARG_ROOT)
    set(ARG_ROOT "${CMAKE_SOURCE_DIR}")
  endif()
  set(KINA_LAYER_DOC "${ARG_DOC}")
  file(STRINGS "${ARG_DOC}" lines)

  # The rows of the "Layers" section, in order.
  set(in_section FALSE)
  set(rows)
  set(KINA_LAYER_HEADERS)
  set(contracts)
  foreach(line IN LISTS lines)
    if(line MATCHES "^## ")
      if(line MATCHES "^## Layers")
        set(in_section TRUE)
      else()
        set(in_section FALSE)
      endif()
      continue()
    endif()
    if(NOT in_section OR NOT line MATCHES "^\\| ")
      continue()
    endif()
    _kina_row_cells("${line}" cells)
    list(LENGTH cells count)
    if(count LESS 5)
      continue()
    endif()
    list(GET cells 0 name_cell)
    list(GET cells 2 headers_cell)
    list(GET cells 4 links_cell)
    _kina_backticked("${headers_cell}" headers)
    if(name_cell MATCHES "header-only")
      list(APPEND contracts ${headers})
      foreach(header ${headers})
        list(APPEND KINA_LAYER_HEADERS "${header}=header-only")
      endforeach()
      continue()
    endif()
    _kina_backticked("${name_cell}" names)
    if(NOT names)
      continue() # the header row
    endif()
    list(GET names 0 name)
    list(APPEND rows ${name})
    set(optional_${name} FALSE)
    if(name_cell MATCHES "\\(optional\\)")
      set(optional_${name} TRUE)
    endif()
    _kina_backticked("${links_cell}" links_${name})
    # Rule 4: whether the row links MLIR, directly or through a row.
    set(mlir_${name} FALSE)
    foreach(lib ${links_${name}})
      if(lib STREQUAL "MLIR" OR mlir_${lib})
        set(mlir_${name} TRUE)
      endif()
    endforeach()
    foreach(header ${headers})
      list(APPEND KINA_LAYER_HEADERS "${header}=${name}")
    endforeach()
  endforeach()
  if(NOT rows)
    _kina_layering_error("no rows found")
  endif()
  set(KINA_LAYER_HEADERS "${KINA_LAYER_HEADERS}" PARENT_SCOPE)

  # Rule 1: every target of ours has a row.
  _kina_targets_in("${ARG_ROOT}" defined)
  foreach(target ${defined})
    get_target_property(type ${target} TYPE)
    if(target MATCHES "^obj\\." OR NOT type MATCHES
       "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    if(NOT target IN_LIST rows)
      _kina_layering_error("${target} has no row")
    endif()
  endforeach()

  set(below)
  foreach(row ${rows})
    if(NOT TARGET ${row})
      if(NOT optional_${row})
        _kina_layering_error("${row} has a row but is not a target")
      endif()
      list(APPEND below ${row})
      continue()
    endif()
    # Rule 2: direct links, as listed, all of them below.
    get_target_property(linked ${row} LINK_LIBRARIES)
    set(actual)
    foreach(lib ${linked})
      if(lib IN_LIST rows OR lib STREQUAL "MLIR")
        list(APPEND actual ${lib})
      endif()
    endforeach()
    foreach(dependency ${row} obj.${row})
      if(TARGET ${dependency})
        get_target_property(added ${dependency} MANUALLY_ADDED_DEPENDENCIES)
        foreach(lib ${added})
          if(lib IN_LIST rows)
            list(APPEND actual ${lib})
          endif()
        endforeach()
      endif()
    endforeach()
    list(REMOVE_DUPLICATES actual)
    set(listed ${links_${row}})
    foreach(lib ${actual})
      if(NOT lib IN_LIST listed)
        _kina_layering_error("${row} links ${lib}, which its row does not "
                             "list")
      endif()
    endforeach()
    foreach(lib ${listed})
      if(NOT lib IN_LIST actual)
        _kina_layering_error("${row}'s row lists ${lib}, which ${row} does "
                             "not link")
      endif()
      if(NOT lib STREQUAL "MLIR" AND NOT lib IN_LIST below)
        _kina_layering_error("${row} links ${lib}, which is not below it in "
                             "the table")
      endif()
    endforeach()

    # Rule 3: its files include only what it may.
    set(allowed ${row} header-only ${listed})
    _kina_files_of(${row} files)
    foreach(header_rule ${KINA_LAYER_HEADERS})
      string(REPLACE "=" ";" header_rule "${header_rule}")
      list(GET header_rule 0 prefix)
      list(GET header_rule 1 owner)
      if(owner STREQUAL row)
        file(GLOB_RECURSE owned "${ARG_INCLUDE_DIR}/${prefix}*.h")
        foreach(header ${owned})
          file(RELATIVE_PATH relative "${ARG_INCLUDE_DIR}" "${header}")
          _kina_header_owner("${relative}" actual_owner)
          if(actual_owner STREQUAL row)
            list(APPEND files "${header}")
          endif()
        endforeach()
      endif()
    endforeach()
    list(REMOVE_DUPLICATES files)
    foreach(file ${files})
      _kina_check_file(${row} "${file}" "${allowed}")
    endforeach()

    # Rule 4: no mlir/ header in a row that links no MLIR.
    set(links_mlir ${mlir_${row}})
    foreach(lib ${linked})
      if(lib MATCHES "^MLIR")
        set(links_mlir TRUE)
      endif()
    endforeach()
    if(NOT links_mlir)
      foreach(file ${files})
        _kina_system_include("${file}" "mlir/" found)
        if(NOT found STREQUAL "")
          _kina_layering_error("${file} (in ${row}) includes ${found}, but "
                               "${row} links no MLIR")
        endif()
      endforeach()
    endif()
    list(APPEND below ${row})
  endforeach()

  # Header-only contracts include only each other; every header has an
  # owner.
  file(GLOB_RECURSE all_headers "${ARG_INCLUDE_DIR}/Kina/*.h")
  foreach(header ${all_headers})
    file(RELATIVE_PATH relative "${ARG_INCLUDE_DIR}" "${header}")
    _kina_header_owner("${relative}" owner)
    if(owner STREQUAL "")
      _kina_layering_error("${relative} has no owner: add it to a row's "
                           "headers")
    endif()
    if(owner STREQUAL "header-only")
      _kina_check_file(header-only "${header}" "header-only")
      # Rule 5: no MLIR or LLVM header in a header-only contract.
      _kina_system_include("${header}" "mlir/;llvm/" found)
      if(NOT found STREQUAL "")
        _kina_layering_error("${relative} (header-only) includes ${found}: "
                             "header-only headers include no mlir/ or llvm/ "
                             "header")
      endif()
    endif()
  endforeach()
endfunction()
