/** One server-sent message as a client reads it. */
export interface ActivityMessage {
  id?: string;
  event?: string;
  data?: any;
}

/** A reader of GET /api/v1/activity: the messages so far, parsed, and a way to stop. */
export async function readActivity(url: string, headers: Record<string, string>) {
  const stop = new AbortController();
  const res = await fetch(`${url}/api/v1/activity`, { headers, signal: stop.signal });
  const messages: ActivityMessage[] = [];
  const raw: string[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          raw.push(block);
          const message: ActivityMessage = {};
          for (const line of block.split('\n')) {
            const [field, ...rest] = line.split(': ');
            const value = rest.join(': ');
            if (field === 'id') message.id = value;
            else if (field === 'event') message.event = value;
            else if (field === 'data') message.data = JSON.parse(value);
          }
          if (message.data) messages.push(message);
        }
      }
    } catch {
      // stopped
    }
  })();
  /** `ended`: the server closed the stream. */
  return {
    res,
    messages,
    raw,
    ended: done,
    stop: async () => {
      stop.abort();
      await done;
    },
  };
}
