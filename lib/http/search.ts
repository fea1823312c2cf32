import type { Filter } from 'mongodb';

import { ApiError } from '../errors.js';

/**
 * Logto's list search (packages/core/src/utils/search.ts), over MongoDB:
 *
 * - `search=v` searches every searchable field, `search.<field>=v` one of them (repeatable in `exact` mode);
 * - `mode` / `mode.<field>`: `like` (the default: SQL LIKE, `%` any run, `_` one character, `\` escapes),
 *   `exact`, `similar_to` (SQL SIMILAR TO; case-sensitive only) or `posix` (a regular expression);
 * - `joint` (or `jointMode`): `or` (the default) or `and` between the fields searched;
 * - `isCaseSensitive`: `false` by default.
 *
 * A malformed search is 400 `request.invalid_input`, as Logto's. Every pattern becomes an anchored
 * regular expression checked here first; a `posix` one is the caller's, so its length is bounded and the
 * query that runs it has a time limit (`searchTimeLimitMs`).
 */

export type MatchMode = 'like' | 'exact' | 'similar_to' | 'posix';
const matchModes: readonly MatchMode[] = ['like', 'exact', 'similar_to', 'posix'];

export interface SearchMatch {
  /** Undefined: every searchable field. */
  field?: string;
  mode: MatchMode;
  values: string[];
}

export interface Search {
  matches: SearchMatch[];
  joint: 'and' | 'or';
  isCaseSensitive: boolean;
}

/** A search's query may run this long before the database stops it (a caller's regular expression can be slow). */
export const searchTimeLimitMs = 2000;
const maxValueLength = 256;

const invalid = (message: string) => new ApiError('request.invalid_input', message);

/** The field a `search.<field>` or `mode.<field>` key names, undefined for the general one. */
function fieldOf(key: string, allowed: readonly string[]): string | undefined {
  const path = key.split('.');
  if (path.length > 2) throw invalid(`Unsupported nested search field path \`${path.slice(1).join('.')}\`: only first-level fields can be searched.`);
  const field = path[1];
  if (field !== undefined && !allowed.includes(field)) throw invalid(`Search field \`${field}\` is not allowed. Expect one of ${allowed.join(', ')}.`);
  return field;
}

/** Reads a search from a request's query string; undefined when it has none. */
export function parseSearch(params: URLSearchParams, allowed: readonly string[]): Search | undefined {
  const jointValue = params.get('joint') ?? params.get('jointMode');
  if (jointValue && jointValue !== 'and' && jointValue !== 'or') throw invalid(`Search joint mode \`${jointValue}\` is not valid, expect one of and, or.`);
  const caseValue = params.get('isCaseSensitive');
  const modes = new Map<string | undefined, MatchMode>();
  const values = new Map<string | undefined, string[]>();
  for (const [key, value] of params) {
    if (key === 'mode' || key.startsWith('mode.')) {
      const field = fieldOf(key, allowed);
      if (!matchModes.includes(value as MatchMode)) {
        throw invalid(`Search match mode \`${value}\`${field ? ` for field \`${field}\`` : ''} is not valid, expect one of ${matchModes.join(', ')}.`);
      }
      modes.set(field, value as MatchMode);
    } else if (key === 'search' || key.startsWith('search.')) {
      const field = fieldOf(key, allowed);
      if (value.length > maxValueLength) throw invalid(`Search value is longer than ${maxValueLength} characters.`);
      values.set(field, [...(values.get(field) ?? []), value]);
    }
  }
  if (values.size === 0) return undefined;
  const matches = [...values].map(([field, list]): SearchMatch => {
    const mode = modes.get(field) ?? modes.get(undefined) ?? 'like';
    if (list.some((value) => value === '')) throw invalid('Search value cannot be empty.');
    if (mode !== 'exact' && list.length > 1) throw invalid('Only one search value is allowed when search mode is not `exact`.');
    return { field, mode, values: list };
  });
  const isCaseSensitive = caseValue === 'true';
  if (!isCaseSensitive && matches.some(({ mode }) => mode === 'similar_to')) throw invalid('Cannot use case-insensitive match for `similar to`.');
  return { matches, joint: jointValue === 'and' ? 'and' : 'or', isCaseSensitive };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * An SQL LIKE or SIMILAR TO pattern as a regular expression's source: `%` any run, `_` one character,
 * `\\` escapes the next; every other character as `other` translates it.
 */
function sqlPattern(pattern: string, other: (char: string) => string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i];
    if (char === '\\' && i + 1 < pattern.length) out += escapeRegex(pattern[(i += 1)]);
    else if (char === '%') out += '.*';
    else if (char === '_') out += '.';
    else out += other(char);
  }
  return out;
}

/** LIKE: everything else is literal. */
const likeToRegex = (pattern: string) => `^${sqlPattern(pattern, escapeRegex)}$`;
/** SIMILAR TO keeps the operators `| * + ? {} () []`; `.`, `^` and `$` are literal there. */
const similarToRegex = (pattern: string) => `^(?:${sqlPattern(pattern, (char) => ('.^$/'.includes(char) ? `\\${char}` : char))})$`;

function regexOf(mode: MatchMode, value: string, isCaseSensitive: boolean): RegExp {
  const source = mode === 'exact' ? `^${escapeRegex(value)}$` : mode === 'like' ? likeToRegex(value) : mode === 'similar_to' ? similarToRegex(value) : value;
  try {
    return new RegExp(source, isCaseSensitive ? '' : 'i');
  } catch (error) {
    throw invalid(`Search value \`${value}\` is not a valid ${mode} pattern: ${(error as Error).message}`);
  }
}

/**
 * The MongoDB filter of a search over `fields` (the API's field name to the stored one). Exact matches
 * that are case-sensitive compare by equality; every other match is a regular expression.
 */
export function searchFilter<T>(search: Search | undefined, fields: Record<string, string>): Filter<T> {
  if (!search) return {};
  const clauses = search.matches.map(({ field, mode, values }) => {
    // The general search looks in every stored field once, however many spellings name it.
    const paths = field === undefined ? [...new Set(Object.values(fields))] : [fields[field]];
    const conditions = paths.flatMap((path) =>
      values.map((value) => ({ [path]: mode === 'exact' && search.isCaseSensitive ? value : regexOf(mode, value, search.isCaseSensitive) })),
    );
    return conditions.length === 1 ? conditions[0] : { $or: conditions };
  });
  if (clauses.length === 1) return clauses[0] as Filter<T>;
  return (search.joint === 'and' ? { $and: clauses } : { $or: clauses }) as Filter<T>;
}

/**
 * Runs a search's queries: a pattern the database refuses, or one that runs past `searchTimeLimitMs`,
 * is the caller's 400 `request.invalid_input`, not our 500.
 */
export async function searching<R>(run: (limits: { maxTimeMS: number }) => Promise<R>): Promise<R> {
  try {
    return await run({ maxTimeMS: searchTimeLimitMs });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // 50: MaxTimeMSExpired; 2 (BadValue) and 51091: a regular expression the server cannot compile.
    if (code === 50) throw invalid(`The search took longer than ${searchTimeLimitMs} ms; narrow it.`);
    if (code === 2 || code === 51091) throw invalid(`The search is not valid: ${(error as Error).message}`);
    throw error;
  }
}
