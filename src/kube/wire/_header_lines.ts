// Request header lines for our own sockets (HTTP/1.1 and HTTP/2): validated against header injection, rendered once
// per credentials object and per content type.

import { TransportError } from "../errors.ts";

/**
 * Credential and Content-Type header lines, validated (headerLines) and rendered once per credentials object and per
 * distinct content type, not per request.
 */
export interface HeaderCheck {
  auth(headers: Record<string, string>): string;
  contentType(value: string): string;
}

/** A HeaderCheck for one transport. */
export function headerCheck(): HeaderCheck {
  let authFor: Record<string, string> | undefined;
  let authLines = "";
  const contentTypes = new Map<string, string>();
  return {
    auth(headers) {
      if (headers !== authFor) {
        authLines = headerLines(headers);
        authFor = headers;
      }
      return authLines;
    },
    contentType(value) {
      let line = contentTypes.get(value);
      if (line === undefined) {
        line = headerLines({ "Content-Type": value });
        if (contentTypes.size < 32) contentTypes.set(value, line);
      }
      return line;
    },
  };
}

/** Request headers as HTTP/1.1 lines. A CR or LF inside a value (header injection) is refused. */
export function headerLines(headers: Record<string, string>): string {
  let out = "";
  for (const name in headers) {
    const value = headers[name];
    if (/[\r\n]/.test(value) || /[\r\n:]/.test(name)) {
      // The message names the header, never its value (it may be a credential).
      throw new TransportError(
        `the request header ${JSON.stringify(name.replace(/[\r\n]/g, ""))} contains a line break`,
      );
    }
    out += `${name}: ${value}\r\n`;
  }
  return out;
}
