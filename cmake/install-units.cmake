# Run by `cmake --install` (install(SCRIPT), see install-operator.cmake): the
# systemd units of docs/examples with /usr/local replaced by the install
# prefix, into lib/systemd/system and the examples folder, and the docs'
# examples/ link.  CMAKE_INSTALL_PREFIX here is the one given to --install.
set(root "$ENV{DESTDIR}")
file(GLOB units "${EXACTAV_SRC}/docs/examples/*.service")
foreach(unit ${units})
  get_filename_component(name "${unit}" NAME)
  file(READ "${unit}" text)
  string(REPLACE "/usr/local/" "${CMAKE_INSTALL_PREFIX}/" text "${text}")
  foreach(dir "lib/systemd/system" "${EXACTAV_EXAMPLES_DIR}")
    set(dest "${root}${CMAKE_INSTALL_PREFIX}/${dir}/${name}")
    message(STATUS "Installing: ${dest}")
    file(WRITE "${dest}" "${text}")
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${dest}")
  endforeach()
endforeach()
set(link "${root}${CMAKE_INSTALL_PREFIX}/${EXACTAV_DOCDIR}/examples")
message(STATUS "Installing: ${link} -> ${EXACTAV_EXAMPLES_LINK}")
file(REMOVE_RECURSE "${link}")
file(CREATE_LINK "${EXACTAV_EXAMPLES_LINK}" "${link}" SYMBOLIC)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${link}")
