# What an operator needs beside the programs, where GNUInstallDirs puts it:
#   share/doc/exactav/            docs/ (README, LICENSE, CHANGELOG too)
#   share/exactav/examples/       docs/examples/ (share/doc/exactav/examples links here)
#   share/exactav/player/         the player kit, when player/ exists
#   lib/systemd/system/           the units of docs/examples, for this prefix
#   lib/sysusers.d/               the users those units run as
#   share/bash-completion/completions/{exactav,stepctl}
# The units in docs/examples name /usr/local (the default prefix, so they
# work as written there); the installed copies name the install prefix, which
# is known only when `cmake --install --prefix P` runs: install-units.cmake
# rewrites them then.
set(EXACTAV_EXAMPLES_DIR ${CMAKE_INSTALL_DATADIR}/exactav/examples)

install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        PATTERN examples EXCLUDE PATTERN man EXCLUDE)
install(FILES README.md LICENSE CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/examples/ DESTINATION ${EXACTAV_EXAMPLES_DIR}
        PATTERN *.service EXCLUDE)
if(EXISTS ${CMAKE_SOURCE_DIR}/player)
  install(DIRECTORY player/ DESTINATION ${CMAKE_INSTALL_DATADIR}/exactav/player)
endif()

# The docs link to examples/...: the same relative link in the installed docs.
file(RELATIVE_PATH EXACTAV_EXAMPLES_LINK /${CMAKE_INSTALL_DOCDIR} /${EXACTAV_EXAMPLES_DIR})
install(CODE "set(EXACTAV_SRC \"${CMAKE_SOURCE_DIR}\")
set(EXACTAV_EXAMPLES_DIR \"${EXACTAV_EXAMPLES_DIR}\")
set(EXACTAV_DOCDIR \"${CMAKE_INSTALL_DOCDIR}\")
set(EXACTAV_EXAMPLES_LINK \"${EXACTAV_EXAMPLES_LINK}\")")
install(SCRIPT cmake/install-units.cmake)

install(FILES docs/examples/sysusers.d/exactav.conf docs/examples/sysusers.d/stepctl.conf
        DESTINATION lib/sysusers.d)
install(FILES completion/exactav.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME exactav)
install(FILES completion/exactav.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME stepctl)
