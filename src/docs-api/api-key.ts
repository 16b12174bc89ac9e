import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { ConfigError } from '../contract/errors';

/** `<prefix>_<secret>`: the service's prefix is not hard-coded (see service-notes). */
export const API_KEY_PATTERN = /^([A-Za-z0-9]+)_(\S+)$/;
export const API_KEY_RULE =
  'must have the form <prefix>_<secret> (letters or digits, "_", then a non-empty secret)';

/**
 * The admin key, kept out of every printable form: String(), JSON, util.inspect and error messages
 * all show `<prefix>_****`. Only `authorizationHeader()` reveals it, for the HTTP request itself.
 */
export class ApiKey {
  readonly #value: string;
  readonly prefix: string;

  constructor(value: string) {
    const match = API_KEY_PATTERN.exec(value);
    if (!match?.[1]) {
      throw new ConfigError(`DOCS_API_KEY: ${API_KEY_RULE}`);
    }
    this.#value = value;
    this.prefix = match[1];
  }

  authorizationHeader(): string {
    return `Bearer ${this.#value}`;
  }

  /**
   * Names the key's organization without revealing the key: the prefix and 16 hex digits of its SHA-256 (the
   * secret is long and random, so the digest cannot be turned back into it). Used in budget workflow ids.
   */
  fingerprint(): string {
    return `${this.prefix}-${createHash('sha256').update(this.#value).digest('hex').slice(0, 16)}`;
  }

  /** Replaces every occurrence of the key (or its secret part) in text with the redacted form. */
  redact(text: string): string {
    const secret = this.#value.slice(this.prefix.length + 1);
    return text.split(this.#value).join(this.toString()).split(secret).join('****');
  }

  toString(): string {
    return `${this.prefix}_****`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return `ApiKey(${this.toString()})`;
  }
}
