/**
 * The document as @elysiajs/swagger generates it, made valid OpenAPI 3.1: the generator puts a
 * schema's `description` and `examples` on the response object itself (where OpenAPI has no
 * `examples`; likewise on parameters), offers every body in three media types the service does not take or give, and
 * copies the schemas' `error` messages (ours, for validation answers) into them.
 */

type Json = Record<string, any>;

const PROBLEM_STATUS = /^[45]\d\d$/;

/**
 * Media type of an answer: a schema naming its `contentMediaType` (the event stream) gets that
 * one; the Stats API's errors, in Plausible's shape (only an `error` property), application/json;
 * other problems problem+json; the metrics text keeps its own.
 */
function mediaType(status: string, content: Json): string {
  const schema = content['application/json']?.schema;
  const declared = schema?.contentMediaType;
  if (typeof declared === 'string') return declared;
  // The Stats API answers Plausible's error shape, `{ "error": message }`, as plain JSON.
  if (PROBLEM_STATUS.test(status) && schema?.properties && Object.keys(schema.properties).join() === 'error') return 'application/json';
  if (PROBLEM_STATUS.test(status)) return 'application/problem+json';
  return content['application/json'] ? 'application/json' : Object.keys(content)[0]!;
}

/** Drops our `error` messages (text) from a schema, at every depth; a property named `error` stays. */
function withoutErrorMessages(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutErrorMessages);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) if (k !== 'error' || typeof v !== 'string') out[k] = withoutErrorMessages(v);
  return out;
}

function conformResponse(status: string, response: Json): Json {
  const type = mediaType(status, response.content ?? {});
  const schema = response.content?.[type]?.schema ?? response.content?.['application/json']?.schema;
  const media: Json = { schema: withoutErrorMessages(schema) };
  if (Array.isArray(response.examples) && response.examples.length > 0) media.example = response.examples[0];
  return { description: response.description ?? (PROBLEM_STATUS.test(status) ? 'A problem' : 'Success'), content: { [type]: media } };
}

/** A parameter's `examples` is a map of Example objects in OpenAPI; the generator lifts the schema's list. */
function conformParameter({ examples, ...parameter }: Json): Json {
  const out: Json = { ...parameter, schema: withoutErrorMessages(parameter.schema) };
  if (Array.isArray(examples) && examples.length > 0) out.example = examples[0];
  return out;
}

function conformOperation(operation: Json): Json {
  const out: Json = { ...operation, responses: {} };
  for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) out.responses[status] = conformResponse(status, response);
  const json = operation.requestBody?.content?.['application/json'];
  if (json) out.requestBody = { ...operation.requestBody, content: { 'application/json': { ...json, schema: withoutErrorMessages(json.schema) } } };
  if (operation.parameters) out.parameters = operation.parameters.map(conformParameter);
  return out;
}

export function conformOpenApi(document: Json): Json {
  const paths: Json = {};
  for (const [path, operations] of Object.entries<Json>(document.paths ?? {})) {
    paths[path] = Object.fromEntries(Object.entries<Json>(operations).map(([method, op]) => [method, conformOperation(op)]));
  }
  return { ...document, openapi: '3.1.0', paths };
}
