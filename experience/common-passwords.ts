/**
 * Passwords of eight characters or more that appear at the top of every published breach list.
 * Shorter ones are refused by the length rule already. Compared lower-cased.
 */
export const commonPasswords = new Set([
  'password', 'password1', 'password12', 'password123', 'password1234', 'passw0rd', 'p@ssw0rd', 'p@ssword', 'pa$$word', 'password!',
  '12345678', '123456789', '1234567890', '0987654321', '987654321', '87654321', '11111111', '1111111111', '00000000', '88888888',
  '12341234', '11223344', '12344321', '123123123', '147258369', '741852963', '789456123', '159753456', '123456789a', 'a123456789',
  'aa123456', 'abc12345', 'abcd1234', '1234abcd', 'abcdefgh', 'abcdefg1', '123456abc', '12qwaszx', '1qaz2wsx', '1qazxsw2',
  'zaq12wsx', '!qaz2wsx', 'qazwsxedc', 'qweasdzxc', '123qweasd', 'qwertyui', 'qwertyuiop', 'qwerty12', 'qwerty123', 'qwerty1234',
  'qwer1234', '1234qwer', 'q1w2e3r4', 'q1w2e3r4t5', '1q2w3e4r', '1q2w3e4r5t', 'asdfghjk', 'asdfghjkl', 'asdf1234', 'zxcvbnm1',
  'zxcvbnm123', 'iloveyou', 'iloveyou1', 'iloveyou2', 'sunshine', 'sunshine1', 'princess', 'princess1', 'football', 'football1',
  'baseball', 'baseball1', 'basketball', 'trustno1', 'superman', 'superman1', 'starwars', 'computer', 'michelle', 'jennifer',
  'jessica1', 'michael1', 'charlie1', 'jordan23', 'liverpool', 'chocolate', 'butterfly', 'whatever', 'nicholas', 'elephant',
  'internet', 'mercedes', 'corvette', 'mustang1', 'samantha', 'danielle', 'welcome1', 'welcome123', 'letmein1', 'letmein123',
  'admin123', 'admin1234', 'administrator', 'changeme', 'changeme1', 'secret123', 'monkey123', 'dragon123', 'shadow123', 'master123',
  'passpass', 'qwertyqwerty', 'access14', 'football12', 'blink182', 'pokemon1', 'spiderman', 'midnight', 'jonathan', 'alexander',
  'benjamin', 'tinkerbell', 'sebastian', 'christian', 'victoria', 'password2', 'password01', 'letmeinnow', 'iloveyou!', 'loveyou1',
  'ihateyou', 'fuckyou1', 'hello123', 'hellohello', 'test1234', 'testtest', 'test12345', 'guest123', 'user1234', 'login123',
  'default1', 'root1234', 'toor1234', 'summer2024', 'summer2025', 'summer2026', 'winter2025', 'winter2026', 'spring2026', 'autumn2026',
]);
