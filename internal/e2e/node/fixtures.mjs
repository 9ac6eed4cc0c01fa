// What the end-to-end tests send, shared by the *.test.mjs files: a
// picture, the tool the mock calls, and the JSON shapes asked for. Every
// mock calls a tool with {"text": <the echoed question>} and answers a
// request for JSON with {"text": "Hello from mock: …"}.

// pixelPNG is a 1×1 PNG, base64.
export const pixelPNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

// textSchema is the schema of the tool's input and of the JSON answers.
export const textSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

// The echo tool in each API's shape.
export const chatEchoTool = { type: 'function', function: { name: 'echo', description: 'Repeats a text.', parameters: textSchema } };
export const responsesEchoTool = { type: 'function', name: 'echo', description: 'Repeats a text.', parameters: textSchema, strict: false };
export const messagesEchoTool = { name: 'echo', description: 'Repeats a text.', input_schema: textSchema };

// answerFormat is the Responses API's text.format json_schema for an
// object with a text.
export const answerFormat = {
  type: 'json_schema',
  name: 'answer',
  schema: { ...textSchema, additionalProperties: false },
  strict: true,
};

// answerTool is JSON output on the Messages API: a forced tool whose input
// is the answer (Anthropic's own pattern; the API has no JSON mode).
export const answerTool = { name: 'record_answer', description: 'Records the answer as JSON.', input_schema: textSchema };

// outputConfig is the Messages API's structured outputs: the answer is a
// JSON text that fits the schema.
export const outputConfig = { format: { type: 'json_schema', schema: { ...textSchema, additionalProperties: false } } };

// messagesImage is a user turn of the Messages API with a text and the picture.
export const messagesImage = {
  role: 'user',
  content: [
    { type: 'text', text: 'What is in this picture' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixelPNG } },
  ],
};

// responsesImage is a user item of the Responses API with a text and the picture.
export const responsesImage = {
  role: 'user',
  content: [
    { type: 'input_text', text: 'What is in this picture' },
    { type: 'input_image', image_url: `data:image/png;base64,${pixelPNG}`, detail: 'low' },
  ],
};
