import { describe, expect, it } from 'vitest';
import {
  hashSecret,
  mintInvitationKey,
  mintSpaceKey,
  mintUserCode,
  mintUserToken,
  SecretBox,
} from '../src/secrets';

describe('secrets', () => {
  it('mints 64-hex space keys that never repeat', () => {
    const keys = new Set(Array.from({ length: 200 }, mintSpaceKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('mints prefixed invitation keys and user tokens', () => {
    expect(mintInvitationKey()).toMatch(/^inv_[A-Za-z0-9_-]{32}$/);
    expect(mintUserToken()).toMatch(/^usr_[A-Za-z0-9_-]{43}$/);
  });

  it('mints user codes from the vowel-free alphabet', () => {
    for (let i = 0; i < 100; i++) expect(mintUserCode()).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
  });

  it('hashes with SHA-256', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('seals and opens secrets, and refuses tampered or foreign ones', () => {
    const box = new SecretBox('server-secret-1');
    const sealed = box.encrypt('key-ünïcode');
    expect(sealed).not.toContain('key');
    expect(box.decrypt(sealed)).toBe('key-ünïcode');
    expect(box.encrypt('same')).not.toBe(box.encrypt('same'));
    expect(() => new SecretBox('server-secret-2').decrypt(sealed)).toThrow();
    const parts = sealed.split('.');
    // A different first character: the first six bits of the ciphertext change, whatever it was
    // (replacing its end with AA changed nothing when it already ended so, 1 run in 4,096).
    parts[3] = `${parts[3]!.startsWith('A') ? 'B' : 'A'}${parts[3]!.slice(1)}`;
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });
});
