# coldstart_no_vmm(TARGET...): stops the configuration when coldstart_vmm
# is among the libraries a target links, directly or through others, so
# that the rooms documented as needing no KVM keep needing none;
# coldstart_no_link(LIBRARY TARGET...) the same for another library. Run
# after every room's add_subdirectory: they read the targets' link
# properties.

# The targets `target` links, directly or not, into `out`.
function(coldstart_link_closure target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(type ${t} TYPE)
    set(props INTERFACE_LINK_LIBRARIES)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      list(APPEND props LINK_LIBRARIES)
    endif()
    foreach(prop ${props})
      get_target_property(libs ${t} ${prop})
      if(libs)
        # $<LINK_ONLY:lib> is how a static library records a PRIVATE one.
        string(REGEX REPLACE "\\$<LINK_ONLY:([^>]*)>" "\\1" libs "${libs}")
        list(APPEND todo ${libs})
      endif()
    endforeach()
  endwhile()
  list(REMOVE_ITEM seen ${target})
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# The chain of links from `from` to `to`, "a -> b -> c", into `out`.
function(coldstart_link_path from to out)
  set(${out} "" PARENT_SCOPE)
  if(from STREQUAL to)
    set(${out} ${to} PARENT_SCOPE)
    return()
  endif()
  foreach(prop INTERFACE_LINK_LIBRARIES LINK_LIBRARIES)
    get_target_property(libs ${from} ${prop})
    if(NOT libs)
      continue()
    endif()
    string(REGEX REPLACE "\\$<LINK_ONLY:([^>]*)>" "\\1" libs "${libs}")
    foreach(lib ${libs})
      if(NOT TARGET ${lib})
        continue()
      endif()
      coldstart_link_closure(${lib} below)
      if(lib STREQUAL to OR to IN_LIST below)
        coldstart_link_path(${lib} ${to} rest)
        set(${out} "${from} -> ${rest}" PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

function(coldstart_no_link lib)
  foreach(target ${ARGN})
    coldstart_link_closure(${target} closure)
    if(lib IN_LIST closure)
      coldstart_link_path(${target} ${lib} chain)
      message(FATAL_ERROR "${target} must not link ${lib}, but it does: "
        "${chain}. Its room needs no KVM (docs/internals.md); move what "
        "it uses into a room below it.")
    endif()
  endforeach()
endfunction()

function(coldstart_no_vmm)
  coldstart_no_link(coldstart_vmm ${ARGN})
endfunction()
