// A listener that does nothing, for events whose caller has already said why none is needed.

/** Does nothing; pass it where an event must have a listener but carries nothing to act on. */
export function ignore(): void {
  // Each caller says at its call site why the event needs no answer.
}
