# Ember's CMake package: find_package(Ember) with Ember_DIR set to what `ember --cmake-dir`
# prints, for example
#
#   execute_process(COMMAND ember --cmake-dir OUTPUT_VARIABLE Ember_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
#   find_package(Ember REQUIRED)
#   ember_add_kernels(my_kernels
#       SOURCES kernels/rope.ember kernels/rmsnorm.ember
#       ARCHS sm_80 sm_90
#       DEFINES HEAD_DIM=64,128)
#   target_link_libraries(my_app PRIVATE my_kernels)    # include dirs + build order
#
# ember_add_kernels(<target>
#     SOURCES <file.ember>...          kernel sources
#     [ARCHS <sm_XX>...]               default: Ember's default arch
#     [DEFINES <NAME=VALUE[,VALUE...]>...]   for every source; a list of values makes one
#                                      output per combination. A source's own values: its
#                                      source file property EMBER_DEFINES, e.g.
#     set_source_files_properties(kernels/rope.ember PROPERTIES EMBER_DEFINES "HEAD_DIM=64,128")
#     [EMIT header|fatbin|cubin|ptx]   default header (embedding a fatbin of every arch)
#     [IMAGE fatbin|cubin|ptx]         what a header embeds (default fatbin)
#     [OUTPUT_DIR <dir>]               default ${CMAKE_CURRENT_BINARY_DIR}/<target>
#     [TUNED <device>]                 one output per configuration the tuned tables next to
#                                      each source (tuned/KERNEL.json, `ember tune`) chose for
#                                      the device whose name contains <device> (e.g. H100);
#                                      an edit to a table reconfigures
#     [OPTIONS <ember compile option>...])
#
# makes one build step per output (named as `ember compile` names it, listed in
# <target>_OUTPUTS), each with a dependency file (-MD), so that Make and Ninja rebuild
# exactly the outputs an edit to a source or to any file it imports affects; and an
# INTERFACE library <target> whose include directory is OUTPUT_DIR and which builds them
# first. Ember's compile cache serves outputs that were built before (EMBER_CACHE_DIR).

cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)

# The ember command of the installation this file belongs to: <prefix>/bin/ember next to
# <prefix>/lib/pythonX.Y/site-packages/ember/artifacts/cmake (a virtual environment), else PATH.
get_filename_component(_ember_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../../../.." ABSOLUTE)
find_program(EMBER_EXECUTABLE NAMES ember
             HINTS "${_ember_prefix}/bin" "${_ember_prefix}/Scripts" ENV VIRTUAL_ENV
             PATH_SUFFIXES bin Scripts
             DOC "the ember compiler")
if(NOT EMBER_EXECUTABLE)
    set(Ember_FOUND FALSE)
    set(Ember_NOT_FOUND_MESSAGE "the `ember` command was not found (set EMBER_EXECUTABLE)")
    return()
endif()
execute_process(COMMAND "${EMBER_EXECUTABLE}" --version
                OUTPUT_VARIABLE _ember_version_text OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE _ember_rc)
if(NOT _ember_rc EQUAL 0)
    set(Ember_FOUND FALSE)
    set(Ember_NOT_FOUND_MESSAGE "${EMBER_EXECUTABLE} --version failed")
    return()
endif()
string(REGEX MATCH "^ember ([0-9][^ ]*)" _ember_match "${_ember_version_text}")
set(Ember_VERSION "${CMAKE_MATCH_1}")
set(Ember_FOUND TRUE)

function(ember_add_kernels target)
    cmake_parse_arguments(PARSE_ARGV 1 EK "" "EMIT;IMAGE;OUTPUT_DIR;TUNED" "SOURCES;ARCHS;DEFINES;OPTIONS")
    if(EK_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "ember_add_kernels(${target}): unknown arguments ${EK_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT EK_SOURCES)
        message(FATAL_ERROR "ember_add_kernels(${target}): SOURCES is empty")
    endif()
    if(NOT EK_EMIT)
        set(EK_EMIT header)
    endif()
    if(NOT EK_OUTPUT_DIR)
        set(EK_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${target}")
    endif()
    get_filename_component(EK_OUTPUT_DIR "${EK_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    file(MAKE_DIRECTORY "${EK_OUTPUT_DIR}")

    set(common --emit "${EK_EMIT}")
    if(EK_IMAGE)
        list(APPEND common --image "${EK_IMAGE}")
    endif()
    foreach(arch IN LISTS EK_ARCHS)
        list(APPEND common --arch "${arch}")
    endforeach()
    list(APPEND common ${EK_OPTIONS})
    set(define_args "")
    foreach(d IN LISTS EK_DEFINES)
        list(APPEND define_args -D "${d}")
    endforeach()

    set(outputs "")
    set(planned_sources "")
    foreach(given IN LISTS EK_SOURCES)
        get_filename_component(src "${given}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
        # this source's own const values (its EMBER_DEFINES property), after the common ones
        set(source_define_args ${define_args})
        get_source_file_property(own "${given}" EMBER_DEFINES)
        if(own)
            foreach(d IN LISTS own)
                list(APPEND source_define_args -D "${d}")
            endforeach()
        endif()
        # The outputs and their const values, as `ember compile` plans them (with TUNED: the
        # tables' configurations, each output then built with its own values).
        set(tuned_args "")
        if(EK_TUNED)
            set(tuned_args --tuned "${EK_TUNED}")
            get_filename_component(src_dir "${src}" DIRECTORY)
            file(GLOB tables "${src_dir}/tuned/*.json")
            set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${tables} "${src_dir}/tuned")
        endif()
        execute_process(COMMAND "${EMBER_EXECUTABLE}" compile "${src}" ${common} ${source_define_args}
                                ${tuned_args} -o "${EK_OUTPUT_DIR}/" --list-outputs
                        OUTPUT_VARIABLE plan ERROR_VARIABLE plan_err RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "ember_add_kernels(${target}): ${plan_err}")
        endif()
        # one line per output: OUTPUT<tab>NAME=VALUE<tab>...
        string(STRIP "${plan}" plan)
        string(REPLACE "\n" ";" plan_lines "${plan}")
        foreach(line IN LISTS plan_lines)
            string(REPLACE "\t" ";" fields "${line}")
            list(POP_FRONT fields out)
            set(args "")
            foreach(d IN LISTS fields)
                list(APPEND args -D "${d}")
            endforeach()
            get_filename_component(out "${out}" ABSOLUTE BASE_DIR "${EK_OUTPUT_DIR}")
            list(FIND outputs "${out}" taken)
            if(NOT taken EQUAL -1)
                list(GET planned_sources ${taken} other)
                message(FATAL_ERROR "ember_add_kernels(${target}): ${other} and ${src} would both be "
                        "written to ${out} (outputs are named after the file name). Put one in another "
                        "ember_add_kernels() call (its own OUTPUT_DIR), or rename it.")
            endif()
            add_custom_command(
                OUTPUT "${out}"
                COMMAND "${EMBER_EXECUTABLE}" compile "${src}" ${common} ${args} -o "${out}"
                        -MD -MF "${out}.d" -MQ "${out}"
                DEPENDS "${src}"
                DEPFILE "${out}.d"
                COMMENT "Ember: ${out}"
                VERBATIM)
            list(APPEND outputs "${out}")
            list(APPEND planned_sources "${src}")
        endforeach()
    endforeach()

    add_custom_target(${target}_build ALL DEPENDS ${outputs})
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE "${EK_OUTPUT_DIR}")
    add_dependencies(${target} ${target}_build)
    set(${target}_OUTPUTS ${outputs} PARENT_SCOPE)
endfunction()
