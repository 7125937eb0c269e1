import { describe, expect, it } from 'vitest';
import {
  decodeBytesPermissive,
  decodeHtmlEntities,
  normalise,
  normaliseUnicode,
  percentDecode,
  stripNullBytes,
} from '../../../src/enrichment/request-scan/decode.js';

describe('percentDecode', () => {
  it('decodes %XX as UTF-8', () => {
    expect(percentDecode('%27%20or%201%3D1')).toBe("' or 1=1");
    expect(percentDecode('caf%C3%A9')).toBe('café');
  });
  it('maps overlong UTF-8 to the character it smuggles', () => {
    expect(percentDecode('%c0%af')).toBe('/');
    expect(percentDecode('%c0%ae%c0%ae')).toBe('..');
    expect(percentDecode('%e0%80%af')).toBe('/');
    expect(percentDecode('%c1%9c')).toBe('\\');
  });
  it('reads the broken encodings traversal fuzzers send: split hex, lax hex, any byte after 0xc0/0xc1, five-byte overlong', () => {
    expect(normalise('%%32%%65%%32%%65%%32%%66')).toBe('../');
    expect(percentDecode('%2%e%2%e')).toBe('..');
    expect(percentDecode('%c1%pc')).toBe('\\');
    expect(percentDecode('%bg%qf')).toBe('/');
    expect(percentDecode('%c0%9v%c1%8s')).toBe('/\\');
    expect(percentDecode('%c0%2f%c0%5c%c1%1c')).toBe('/\\\\');
    expect(percentDecode('%f8%80%80%80%af%fc%80%80%80%80%ae')).toBe('/.');
  });
  it('keeps lax hex outside a multi-byte sequence as text', () => {
    expect(percentDecode('50%off, 20%pt')).toBe('50%off, 20%pt');
  });
  it('honours IIS %uXXXX', () => {
    expect(percentDecode('%u002e%u002e%u2215')).toBe('..\u2215');
  });
  it('keeps malformed escapes and never throws', () => {
    expect(percentDecode('100%')).toBe('100%');
    expect(percentDecode('%zz%4')).toBe('%zz%4');
    expect(percentDecode('%ff%fe')).toBe('\u00ff\u00fe');
  });
  it('turns + into space only for query strings', () => {
    expect(percentDecode('a+b', true)).toBe('a b');
    expect(percentDecode('a+b')).toBe('a+b');
    expect(percentDecode('a%2Bb', true)).toBe('a+b');
  });
  it('decodes one round per call', () => {
    expect(percentDecode('%252e')).toBe('%2e');
  });
});

describe('decodeBytesPermissive', () => {
  it('decodes 4-byte sequences and falls back to Latin-1 on truncation', () => {
    expect(decodeBytesPermissive([0xf0, 0x9f, 0x98, 0x80])).toBe('😀');
    expect(decodeBytesPermissive([0xe0, 0x80])).toBe('\u00e0\u0080');
  });
});

describe('decodeHtmlEntities', () => {
  it('decodes named entities with and without semicolon', () => {
    expect(decodeHtmlEntities('&lt;script&gt;')).toBe('<script>');
    expect(decodeHtmlEntities('&lt;img&gt')).toBe('<img>');
    expect(decodeHtmlEntities('javascript&colon;alert&lpar;1&rpar;')).toBe('javascript:alert(1)');
    expect(decodeHtmlEntities('&Tab;&NewLine;')).toBe('\t\n');
  });
  it('decodes decimal and hex references, padded or not', () => {
    expect(decodeHtmlEntities('&#39;&#x27;&#0000039;&#X3C;')).toBe("''" + "'<");
  });
  it('leaves unknown entities and bare ampersands alone', () => {
    expect(decodeHtmlEntities('Tom & Jerry &copy; &unknown;')).toBe('Tom & Jerry &copy; &unknown;');
    expect(decodeHtmlEntities('&#xZZ; &#;')).toBe('&#xZZ; &#;');
  });
  it('does not overflow on absurd numeric references', () => {
    expect(decodeHtmlEntities('&#99999999999999999999;')).toBe('&#99999999999999999999;');
  });
});

describe('normaliseUnicode', () => {
  it('folds fullwidth forms to ASCII (NFKC)', () => {
    expect(normaliseUnicode('＜ｓｃｒｉｐｔ＞')).toBe('<script>');
    expect(normaliseUnicode('＇ ｏｒ １＝１')).toBe("' or 1=1");
    expect(normaliseUnicode('．．／')).toBe('../');
  });
  it('returns ASCII strings unchanged (same instance)', () => {
    const s = 'plain ascii';
    expect(normaliseUnicode(s)).toBe(s);
  });
});

describe('stripNullBytes', () => {
  it('drops NUL and other C0 controls but keeps tab and newlines', () => {
    expect(stripNullBytes('/etc/passwd\u0000.png')).toBe('/etc/passwd.png');
    expect(stripNullBytes('a\tb\nc\u0001')).toBe('a\tb\nc');
  });
});

describe('normalise (the full chain)', () => {
  it('unwraps repeated URL encoding', () => {
    expect(normalise('%252e%252e%252fetc')).toBe('../etc');
    expect(normalise('%25252e')).toBe('.');
  });
  it('unwraps URL encoding around entities and entities around URL encoding', () => {
    expect(normalise('%26lt%3Bscript%26gt%3B')).toBe('<script>');
    expect(normalise('&amp;lt;svg&amp;gt;')).toBe('<svg>');
  });
  it('folds case', () => {
    expect(normalise('UnIoN SeLeCt')).toBe('union select');
  });
  it('applies NFKC after decoding (%EF%BC%87 is a fullwidth apostrophe)', () => {
    expect(normalise('%EF%BC%87%20OR%201%3D1')).toBe("' or 1=1");
  });
  it('removes null bytes that were percent-encoded', () => {
    expect(normalise('passwd%00.jpg')).toBe('passwd.jpg');
  });
  it('stops after a bounded number of rounds', () => {
    // Seven levels of encoding: six rounds leave one level.
    expect(normalise('%25252525252527')).toBe('%27');
    expect(normalise('%252525252527')).toBe("'");
  });
});
