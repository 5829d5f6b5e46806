// What both pages' scripts share: building elements with text (never HTML) and badges.
// Loaded before each page's own script, which reads it as `ui`.
'use strict';

/* exported ui */
const ui = Object.freeze({
  /** The element with this id. */
  byId: (id) => document.getElementById(id),

  /** An element with text or child nodes; `props` are set as properties (className ...). */
  el(tag, props, children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of [].concat(children === undefined ? [] : children)) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  },

  /** A coloured label: `kind` is ok, bad or warn. */
  badge(text, kind) {
    return ui.el('span', { className: `badge ${kind}` }, text);
  },
});
