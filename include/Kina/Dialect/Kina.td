//===- Kina.td - Umbrella for the kina dialect -------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINA_TD
#define KINA_DIALECT_KINA_TD

include "Kina/Dialect/KinaDialect.td"
include "Kina/Dialect/KinaAttrs.td"
include "Kina/Dialect/KinaTypes.td"
include "Kina/Dialect/KinaInterfaces.td"
include "Kina/Dialect/KinaOps.td"

#endif // KINA_DIALECT_KINA_TD
