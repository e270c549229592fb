/* The version the library was built from (VERSION, through
 * -DTRACEPROF_VERSION), kept in the file as a tagged string that the command
 * reads without loading the library (python/traceprof/cli/runenv.py,
 * library_version()): `traceprof run` says so in one line when its library
 * comes from another version than itself.  The leading NUL keeps the tag
 * findable whatever string the linker puts before it. */
__attribute__((used)) static const char tp_version_tag[] = "\0traceprof-version=" TRACEPROF_VERSION;
