// The protocol's unsigned 32-bit ceiling, used for limits, counts and the unlimited remainder.

/** The largest uint32: the most a requests_per_unit or hits_addend field can carry. */
export const MAX_UINT32 = 4294967295;
