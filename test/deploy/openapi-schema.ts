/**
 * Checks an object against a CustomResourceDefinition's structural OpenAPI v3 schema as the API server would with
 * strict field validation (kubectl's default): every field known with its type, required fields present, enums,
 * patterns and bounds respected. A schema keyword this does not know fails the check rather than being skipped.
 * The CEL rules (`x-kubernetes-validations`) on the nodes the object reaches are returned for the caller to check.
 */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  anyOf?: Schema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
}

export interface Findings {
  errors: string[];
  /** Each CEL rule of a node the object reached, with the value it applies to. */
  rules: { path: string; rule: string; self: unknown }[];
}

/** Keywords that only document or default a field, or are CEL rules handed back: nothing to check here. */
const PASSIVE = new Set(['description', 'default', 'x-kubernetes-map-type', 'x-kubernetes-validations']);
const CHECKED = new Set([
  'type',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'enum',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'maxItems',
  'anyOf',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
]);
const INT32 = [-(2 ** 31), 2 ** 31 - 1] as const;

export function validateAgainstSchema(schema: Schema, value: unknown): Findings {
  const findings: Findings = { errors: [], rules: [] };
  check(schema, value, '', findings, true);
  return findings;
}

function check(schema: Schema, value: unknown, at: string, out: Findings, root = false): void {
  const where = at || '<root>';
  const unknownKeywords = Object.keys(schema).filter((key) => !CHECKED.has(key) && !PASSIVE.has(key));
  if (unknownKeywords.length > 0)
    out.errors.push(`${where}: schema keyword(s) not handled: ${unknownKeywords.join()}`);
  for (const { rule } of schema['x-kubernetes-validations'] ?? [])
    out.rules.push({ path: where, rule, self: value });

  if (schema['x-kubernetes-int-or-string']) {
    if (!Number.isInteger(value) && typeof value !== 'string')
      out.errors.push(`${where}: must be an integer or a string`);
    return;
  }
  if (
    schema.anyOf &&
    !schema.anyOf.some((option) => validateAgainstSchema(option, value).errors.length === 0)
  ) {
    out.errors.push(`${where}: matches none of anyOf`);
  }
  if (schema.enum && !schema.enum.includes(value))
    out.errors.push(`${where}: ${String(value)} not in ${schema.enum.map(String).join()}`);

  switch (schema.type) {
    case undefined:
      if (!schema['x-kubernetes-preserve-unknown-fields'] && !schema.anyOf)
        out.errors.push(`${where}: untyped`);
      return;
    case 'object':
      checkObject(schema, value, at, out, root);
      return;
    case 'array':
      checkArray(schema, value, at, out);
      return;
    case 'string':
      if (typeof value !== 'string') return void out.errors.push(`${where}: must be a string`);
      if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value))
        out.errors.push(`${where}: "${value}" does not match ${schema.pattern}`);
      if (schema.minLength !== undefined && value.length < schema.minLength)
        out.errors.push(`${where}: too short`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength)
        out.errors.push(`${where}: too long`);
      return;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || (schema.type === 'integer' && !Number.isInteger(value)))
        return void out.errors.push(
          `${where}: must be ${schema.type === 'integer' ? 'an integer' : 'a number'}`,
        );
      const [low, high] = schema.format === 'int32' ? INT32 : [-Infinity, Infinity];
      if (
        value < Math.max(low, schema.minimum ?? -Infinity) ||
        value > Math.min(high, schema.maximum ?? Infinity)
      )
        out.errors.push(`${where}: ${value} out of range`);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') out.errors.push(`${where}: must be a boolean`);
      return;
  }
}

function checkObject(schema: Schema, value: unknown, at: string, out: Findings, root: boolean): void {
  const where = at || '<root>';
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return void out.errors.push(`${where}: must be an object`);
  const fields = value as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (fields[name] === undefined) out.errors.push(`${where}: ${name} is required`);
  }
  for (const [name, field] of Object.entries(fields)) {
    const fieldAt = `${at}.${name}`;
    const known = schema.properties?.[name];
    // The root's metadata is ObjectMeta, which the API server checks itself (the CRD says only `type: object`).
    if (root && name === 'metadata') continue;
    if (known) check(known, field, fieldAt, out);
    else if (typeof schema.additionalProperties === 'object')
      check(schema.additionalProperties, field, fieldAt, out);
    else if (!schema.additionalProperties && !schema['x-kubernetes-preserve-unknown-fields'])
      out.errors.push(`${fieldAt}: unknown field`);
  }
}

function checkArray(schema: Schema, value: unknown, at: string, out: Findings): void {
  if (!Array.isArray(value)) return void out.errors.push(`${at}: must be an array`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    out.errors.push(`${at}: too many items`);
  value.forEach((item, index) => schema.items && check(schema.items, item, `${at}[${index}]`, out));
  const keys = schema['x-kubernetes-list-map-keys'];
  if (schema['x-kubernetes-list-type'] === 'map' && keys) {
    const seen = value.map((item) =>
      JSON.stringify(keys.map((key) => (item as Record<string, unknown>)[key])),
    );
    if (new Set(seen).size !== seen.length) out.errors.push(`${at}: duplicate keys ${keys.join()}`);
  }
  if (schema['x-kubernetes-list-type'] === 'set') {
    const seen = value.map((item) => JSON.stringify(item));
    if (new Set(seen).size !== seen.length) out.errors.push(`${at}: duplicate items`);
  }
}
