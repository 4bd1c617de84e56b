// The UI message chunk schema of ai 5.0.0, written out from its source
// (packages/ai/src/ui-message-stream/ui-message-chunks.ts at the tag ai@5.0.0): every variant a
// z.strictObject, so a chunk with a field ai 5.0.0 does not know is refused, and its
// DefaultChatTransport throws on the first refused chunk (the answer stops there). ai 5 before
// 5.0.217 and ai 6 before 6.0.231 are as strict; later versions only added fields and variants.
// ai 5 is not installed (ai 7 and ai 6.0.325 are, with loose schemas): the zod they bring checks it.
//
// node ai5_chunk_schema.mjs < chunks.json   (a JSON list of chunks)
//
// Prints one JSON list: for each chunk ai 5.0.0 refuses, its index, type and the zod issue.
const { z } = await import('zod/v4');

const providerMetadata = z.record(z.string(), z.record(z.string(), z.json())).optional();
const schema = z.union([
  z.strictObject({ type: z.literal('text-start'), id: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('text-delta'), id: z.string(), delta: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('text-end'), id: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('error'), errorText: z.string() }),
  z.strictObject({
    type: z.literal('tool-input-start'),
    toolCallId: z.string(),
    toolName: z.string(),
    providerExecuted: z.boolean().optional(),
    dynamic: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('tool-input-delta'), toolCallId: z.string(), inputTextDelta: z.string() }),
  z.strictObject({
    type: z.literal('tool-input-available'),
    toolCallId: z.string(),
    toolName: z.string(),
    input: z.unknown(),
    providerExecuted: z.boolean().optional(),
    providerMetadata,
    dynamic: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal('tool-output-available'),
    toolCallId: z.string(),
    output: z.unknown(),
    providerExecuted: z.boolean().optional(),
    dynamic: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal('tool-output-error'),
    toolCallId: z.string(),
    errorText: z.string(),
    providerExecuted: z.boolean().optional(),
    dynamic: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('reasoning'), text: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('reasoning-start'), id: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('reasoning-delta'), id: z.string(), delta: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('reasoning-end'), id: z.string(), providerMetadata }),
  z.strictObject({ type: z.literal('reasoning-part-finish') }),
  z.strictObject({
    type: z.literal('source-url'),
    sourceId: z.string(),
    url: z.string(),
    title: z.string().optional(),
    providerMetadata,
  }),
  z.strictObject({
    type: z.literal('source-document'),
    sourceId: z.string(),
    mediaType: z.string(),
    title: z.string(),
    filename: z.string().optional(),
    providerMetadata,
  }),
  z.strictObject({ type: z.literal('file'), url: z.string(), mediaType: z.string(), providerMetadata }),
  z.strictObject({
    type: z.string().startsWith('data-'),
    id: z.string().optional(),
    data: z.unknown(),
    transient: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal('start-step') }),
  z.strictObject({ type: z.literal('finish-step') }),
  z.strictObject({ type: z.literal('start'), messageId: z.string().optional(), messageMetadata: z.unknown().optional() }),
  z.strictObject({ type: z.literal('finish'), messageMetadata: z.unknown().optional() }),
  z.strictObject({ type: z.literal('abort') }),
  z.strictObject({ type: z.literal('message-metadata'), messageMetadata: z.unknown() }),
]);

let input = '';
for await (const piece of process.stdin) input += piece;
const refused = [];
JSON.parse(input).forEach((chunk, index) => {
  const result = schema.safeParse(chunk);
  if (!result.success) {
    // The union's issue names no field: the chunk's fields say which one ai 5.0.0 does not know.
    const keys = Object.keys(chunk).filter((key) => key !== 'type');
    refused.push({ index, type: chunk?.type, keys, issue: String(result.error.message).slice(0, 300) });
  }
});
process.stdout.write(JSON.stringify(refused));
