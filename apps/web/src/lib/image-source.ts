/**
 * An image message is shown only for an https: URL or a data:image URI of a raster type (the
 * server refuses anything else; this holds even if a message slipped through).
 */
export function isImageSource(source: string): boolean {
  const value = source.trim();
  if (/^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i.test(value)) return true;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}
