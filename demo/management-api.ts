/** One call of the management API as the demo customer makes it, with its key. */
export async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** The answer's data, or an error naming what was asked and what came back. */
export async function expect2xx(call: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const res = await call;
  if (res.status < 200 || res.status > 299)
    throw new Error(`demo: ${what} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}
