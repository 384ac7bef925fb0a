/* Preloaded into the AddressSanitizer runs of scripts/sanitize.sh: dlclose does nothing, so the
 * Vulkan driver (lavapipe, with the LLVM it links) and the layers the loader opened stay mapped
 * until the process exits. LeakSanitizer can then name the library an allocation came from and
 * match tests/sanitizers/lsan.supp, and memory those libraries' globals still hold is not
 * reported (after a real dlclose their frames print as "<unknown module>"). */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
