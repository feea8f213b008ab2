/*
 * dt_binding.h - mistakes in device-tree bindings that the kernel's own
 * schema check reports.
 *
 * `make dt_binding_check` rejects a binding whose $id does not name its
 * own file, a $ref to the types schema with no definition after the '#',
 * and checkpatch asks new bindings to be DT schema, not .txt. A binding
 * sent with one of these was not run through the check once. Apart from
 * those, writing-bindings.rst asks bindings to describe hardware, never
 * Linux or a driver.
 */
#ifndef SLOP_DT_BINDING_H
#define SLOP_DT_BINDING_H

#include "message.h"

/* Sets m->measures[MEASURE_BINDING_SCHEMA_ERRORS] to the number of such
 * mistakes in m's diff and MEASURE_BINDING_DRIVER_LINES to the added
 * binding lines that speak of a driver, each with its evidence (owned by
 * m) naming the first few when there are any. Reads only files under
 * Documentation/devicetree/bindings/. Returns 0, or -ENOMEM when some
 * evidence could not be kept (the counts are set either way). */
int dt_binding_measure(struct message *m);

#endif
