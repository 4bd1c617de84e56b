// Reads a UI message stream the way a useChat front end does, with the AI SDK's own parser.
//
// node ui_stream_client.mjs <package: ai | ai6> <url> <request body as JSON>
//
// Prints one JSON object: the HTTP status and stream header, the chunk types in order, the
// chunks the package's uiMessageChunkSchema refused, the errors readUIMessageStream reported,
// and the UIMessage it assembled (null when nothing arrived).
const [packageName, url, body] = process.argv.slice(2);
const { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } = await import(packageName);

const response = await fetch(url, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body,
});
const out = {
  status: response.status,
  header: response.headers.get('x-vercel-ai-ui-message-stream'),
  contentType: response.headers.get('content-type'),
  chunkTypes: [],
  refused: [],
  errors: [],
  message: null,
};
if (response.ok) {
  const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (result.success) {
          out.chunkTypes.push(result.value.type);
          controller.enqueue(result.value);
        } else {
          out.refused.push(String(result.error?.message ?? result.error).slice(0, 500));
        }
      },
    }),
  );
  for await (const message of readUIMessageStream({ stream: chunks, onError: (e) => out.errors.push(String(e?.message ?? e)) })) {
    out.message = message;
  }
} else {
  out.body = await response.text();
}
process.stdout.write(JSON.stringify(out));
