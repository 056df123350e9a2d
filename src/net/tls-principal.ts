// The principal of a TLS client certificate, the way Kafka names it
// (ssl.principal.mapping.rules, KIP-371): the subject's distinguished name in
// RFC 2253 form ("CN=alice,OU=eng,O=acme"), passed through an ordered list of
// rules; the first rule whose pattern matches the whole name gives the
// principal's name. Rules:
//   DEFAULT                         the distinguished name unchanged
//   RULE:pattern/replacement/[L|U]  a Java-style regular expression that must
//                                   match the whole name, and a replacement
//                                   with $1-style groups; L or U lower- or
//                                   upper-cases the result
// A name no rule matches is refused (Kafka fails the connection the same way).
// Pure: no I/O; the listener hands in the subject text.

import { Errors, SluiceError } from '../util/errors.js';

export type MappingRule =
  | { readonly kind: 'default' }
  | { readonly kind: 'rule'; readonly pattern: RegExp; readonly replacement: string; readonly caseChange: '' | 'L' | 'U'; readonly text: string };

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, `ssl.principal.mapping.rules: ${message}`);
}

/** Reads up to the next unescaped '/', returning the text (escapes of '/' removed) and the index after the '/'. */
function readDelimited(text: string, start: number): { value: string; next: number } | null {
  let value = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '/') {
      value += '/';
      i++;
    } else if (c === '\\' && i + 1 < text.length) {
      value += c + text[i + 1]!;
      i++;
    } else if (c === '/') {
      return { value, next: i + 1 };
    } else {
      value += c;
    }
  }
  return null;
}

/** Parses Kafka's rule list: DEFAULT and RULE:p/r/[LU] entries separated by commas (commas inside a RULE are its own). */
export function parseMappingRules(text: string): MappingRule[] {
  const rules: MappingRule[] = [];
  let i = 0;
  const skipSeparators = (): void => {
    while (i < text.length && /[\s,]/.test(text[i]!)) i++;
  };
  skipSeparators();
  while (i < text.length) {
    if (text.startsWith('DEFAULT', i)) {
      rules.push({ kind: 'default' });
      i += 'DEFAULT'.length;
    } else if (text.startsWith('RULE:', i)) {
      const start = i;
      const pattern = readDelimited(text, i + 'RULE:'.length);
      if (!pattern) throw invalid(`rule at ${start} has no '/' after its pattern`);
      const replacement = readDelimited(text, pattern.next);
      if (!replacement) throw invalid(`rule at ${start} has no '/' after its replacement`);
      i = replacement.next;
      let caseChange: '' | 'L' | 'U' = '';
      if (text[i] === 'L' || text[i] === 'U') caseChange = text[i++] as 'L' | 'U';
      let re: RegExp;
      try {
        re = new RegExp(`^(?:${pattern.value})$`);
      } catch (err) {
        throw invalid(`bad pattern '${pattern.value}': ${(err as Error).message}`);
      }
      rules.push({ kind: 'rule', pattern: re, replacement: replacement.value, caseChange, text: text.slice(start, i) });
    } else {
      throw invalid(`expected DEFAULT or RULE:pattern/replacement/ at '${text.slice(i, i + 30)}'`);
    }
    if (i < text.length && !/[\s,]/.test(text[i]!)) throw invalid(`unexpected '${text.slice(i, i + 30)}' after a rule`);
    skipSeparators();
  }
  if (rules.length === 0) throw invalid('no rule given (use DEFAULT)');
  return rules;
}

/** The principal name for a distinguished name, or null when no rule matches. */
export function applyMappingRules(rules: readonly MappingRule[], dn: string): string | null {
  for (const rule of rules) {
    if (rule.kind === 'default') return dn;
    if (!rule.pattern.test(dn)) continue;
    const name = dn.replace(rule.pattern, rule.replacement);
    return rule.caseChange === 'L' ? name.toLowerCase() : rule.caseChange === 'U' ? name.toUpperCase() : name;
  }
  return null;
}

/**
 * RFC 2253 text of a subject as Node's X509Certificate.subject gives it (one
 * "KEY=value" per line, in certificate order, most general first): reversed,
 * comma-separated, with RFC 2253's special characters escaped — what Java's
 * X500Principal.getName() returns, so Kafka rules written for Java apply.
 */
export function rfc2253(subject: string): string {
  return subject.split('\n').filter((l) => l !== '').reverse().map((rdn) => {
    const eq = rdn.indexOf('=');
    if (eq < 0) return rdn;
    const value = rdn.slice(eq + 1).replace(/\\/g, '\\\\').replace(/([,+"<>;])/g, '\\$1');
    return `${rdn.slice(0, eq)}=${value}`;
  }).join(',');
}
