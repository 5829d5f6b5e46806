// Go's Regexp.Expand templates ($1, ${1}, $name, ${name}) resolved to group indexes once, at load.
import type { GoRegExp } from './go-regexp';

export type IndexedTemplate =
  { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

/** A letter, a decimal digit or `_`: what Go lets a template's name hold. */
const NAME_CHAR = /[\p{L}\p{Nd}_]/u;

interface Reference {
  readonly name: string;
  /** What follows the reference. */
  readonly rest: string;
}

/** The reference at the start of `text` (just after its `$`), as Go's extract reads it. */
function extract(text: string): Reference | undefined {
  const isBraced = text.startsWith('{');
  const body = isBraced ? text.slice(1) : text;
  let end = 0;
  for (const char of body) {
    if (!NAME_CHAR.test(char)) break;
    end += char.length;
  }
  if (end === 0) return undefined;
  if (isBraced && body[end] !== '}') return undefined;
  return { name: body.slice(0, end), rest: body.slice(isBraced ? end + 1 : end) };
}

/** The group a name refers to: a number without leading zero, or a group's name. */
function groupOf(name: string, regexp: GoRegExp): number | undefined {
  if (/^(0|[1-9]\d{0,7})$/.test(name)) {
    const index = Number(name);
    return index <= regexp.groups ? index : undefined;
  }
  return regexp.groupIndex(name);
}

/**
 * `template` as Go's Regexp.Expand reads it against `regexp`, written with `${N}` for each
 * reference to group N and nothing for a reference to no group (Go expands those to the empty
 * string; `$1x` is the group named `1x`, not group 1 and an x). Refused: a literal `$` (`$$`, or
 * a `$` that starts no reference), which an expansion by `${N}` alone cannot keep apart from a
 * reference.
 */
export function indexedTemplate(template: string, regexp: GoRegExp): IndexedTemplate {
  let text = '';
  let rest = template;
  for (let dollar = rest.indexOf('$'); dollar >= 0; dollar = rest.indexOf('$')) {
    text += rest.slice(0, dollar);
    const reference = extract(rest.slice(dollar + 1));
    if (reference === undefined) {
      return {
        ok: false,
        reason: `${JSON.stringify(template)} holds a literal $ (Go keeps it as text); this service reads every $ as a group reference`,
      };
    }
    const group = groupOf(reference.name, regexp);
    if (group !== undefined) text += `\${${group}}`;
    rest = reference.rest;
  }
  return { ok: true, text: text + rest };
}
