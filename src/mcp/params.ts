import { fromJsonSchema, type JsonSchemaType } from '@modelcontextprotocol/server';

/**
 * Request params checked by the SDK's ajv before a handler runs, so a malformed request is -32602
 * Invalid params. (With the spec-method form of `setRequestHandler` the SDK answers malformed params
 * with -32603 Internal error and zod's issue list as the message.) Compiled once, at start-up.
 */
export const paramsSchema = <T>(schema: JsonSchemaType) => ({ params: fromJsonSchema<T>(schema) });
