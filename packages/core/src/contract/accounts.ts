// Wire contract of this domain (zod): request and response schemas.
export {};
