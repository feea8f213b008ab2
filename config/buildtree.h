/*
 * buildtree.h - whether this program runs from the CMake build tree it was
 * built in, found at run time so that no build or source path is compiled
 * into the binaries a package installs.
 *
 * A build tree is the directory above the program's own (build/milter/,
 * build/slopctl/) when it holds a CMakeCache.txt of this project; its
 * source directory is read from there. An installed program (/usr/sbin)
 * has none above it and gets NULL: only installed paths.
 */
#ifndef SLOP_BUILDTREE_H
#define SLOP_BUILDTREE_H

/* The build directory, or NULL when not run from one. Thread-safe: the
 * first call looks, later calls return the same. */
const char *buildtree_dir(void);

/* That build's source directory (for its rules/), or NULL. */
const char *buildtree_source(void);

#endif
