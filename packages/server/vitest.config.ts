import { conveneVitestConfig } from '../../vitest.shared';

export default conveneVitestConfig();
