// A request body already read by a handler that then hands the request on (the challenge fast path falling
// through to the normal path): the REST shim takes it from here instead of reading the drained stream.

const bodies = new WeakMap<object, string>();

export function setPrereadBody(req: object, body: string): void {
  bodies.set(req, body);
}

/** The body read earlier for `req`, once; undefined when nobody read it. */
export function takePrereadBody(req: object): string | undefined {
  const body = bodies.get(req);
  if (body !== undefined) bodies.delete(req);
  return body;
}
