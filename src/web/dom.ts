import { parseHTML } from "linkedom";

// linkedom documents, typed loosely: linkedom's types assume the DOM lib, which this Node project does
// not load.

/* eslint-disable @typescript-eslint/no-explicit-any -- see above */
export type DomNode = any;

export function parseDom(html: string): DomNode {
  return (parseHTML(html) as unknown as { document: DomNode }).document;
}
