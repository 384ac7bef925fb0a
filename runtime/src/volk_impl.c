/* Compiles Debian's volk.c into the runtime (VK_NO_PROTOTYPES is set by CMake). */
#include <volk.c>
