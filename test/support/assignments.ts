/**
 * Follows a ladder's assignment stream (`GET /v1/ladders/{ladder}/assignments`,
 * server-sent events) until stopped: each `assignment` event's data, passed
 * through `map` (which can stamp the time it arrived), lands in `events`;
 * `ready` resolves once the stream's opening comment has arrived.
 */
export function followAssignments<T = unknown>(url: string, ladder: string, map: (data: unknown) => T = (data) => data as T) {
  const controller = new AbortController();
  const events: T[] = [];
  let opened = () => {};
  const ready = new Promise<void>((resolve) => (opened = resolve));
  const done = (async () => {
    try {
      const response = await fetch(`${url}/v1/ladders/${ladder}/assignments`, { signal: controller.signal });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        buffer += decoder.decode(value, { stream: true });
        if (buffer.includes(': assignments of ladder')) opened();
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: assignment\ndata: (.*)$/m.exec(block);
          if (data) events.push(map(JSON.parse(data[1]!)));
        }
      }
    } catch {
      // Aborted, or the server went away.
    }
  })();
  return { events, ready, stop: async () => (controller.abort(), await done) };
}
