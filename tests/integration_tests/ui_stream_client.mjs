// Reads a UI message stream the way a useChat front end does, with the AI SDK's own parser.
//
// node ui_stream_client.mjs <package: ai | ai6> <url> <request body as JSON>
//
// Prints one JSON object: the HTTP status and stream header, the chunk types in order, the
// chunks the package's uiMessageChunkSchema refused, the errors readUIMessageStream reported,
// the UIMessage it assembled (null when nothing arrived), and the words of each citation of its
// text parts, sliced by JavaScript (ai 7 only: ai 6 keeps no citations).
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
  // Each citation's words as a JavaScript client reads them: its text part sliced by startIndex/endIndex.
  out.citedWords = (out.message?.parts ?? [])
    .filter((part) => part.type === 'text' && Array.isArray(part.citations))
    .flatMap((part) => part.citations.map((c) => part.text.slice(c.startIndex, c.endIndex)));
} else {
  out.body = await response.text();
}
process.stdout.write(JSON.stringify(out));
