import base64
import hashlib
import hmac
import json
import unittest

from concierge_server import mint_user_token

SECRET = "whsec_" + base64.b64encode(bytes([3]) * 30).decode()


def decode(segment):
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


class MintUserToken(unittest.TestCase):
    def test_an_hs256_token_with_the_claims_asked_for(self):
        token = mint_user_token("dep-1", SECRET, "guest-1", name="Ana", ctx={"room": "214"}, ttl=600, now=1_800_000_000)
        header, claims, signature = token.split(".")
        self.assertEqual(decode(header), {"alg": "HS256", "typ": "JWT"})
        self.assertEqual(decode(claims), {"aud": "dep-1", "sub": "guest-1", "iat": 1_800_000_000, "exp": 1_800_000_600, "name": "Ana", "ctx": {"room": "214"}})
        expected = hmac.new(SECRET.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
        self.assertEqual(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)), expected)

    def test_an_hour_by_default(self):
        claims = decode(mint_user_token("dep-1", SECRET, "guest-1", now=1_800_000_000).split(".")[1])
        self.assertEqual(claims["exp"] - claims["iat"], 3600)

    def test_refuses_what_the_service_would_refuse(self):
        for kwargs, message in [
            ({"sub": ""}, "sub must be 1 to 256 characters"),
            ({"sub": "x" * 257}, "sub must be 1 to 256 characters"),
            ({"ttl": 86_401}, "ttl must be a whole number of seconds from 1 to 86400"),
            ({"ttl": 1.5}, "ttl must be a whole number"),
            ({"ctx": {"blob": "x" * 4096}}, "ctx must be an object of at most 4 KiB as JSON"),
            ({"ctx": ["a"]}, "ctx must be an object"),
            ({"secret": ""}, "secret is required"),
            ({"name": "x" * 257}, "name must be a string of at most 256 characters"),
        ]:
            arguments = {"deployment_id": "dep-1", "secret": SECRET, "sub": "guest-1", **kwargs}
            with self.subTest(kwargs=list(kwargs)), self.assertRaisesRegex(ValueError, message):
                mint_user_token(**arguments)


if __name__ == "__main__":
    unittest.main()
