/* Stands in for a vendor runtime library (libcudart, libascendcl, ...) that a
 * plugin links against; the loader test hides it to get a real dlerror. */
int fake_vendor_runtime_version(void) { return 1; }
