// An S3 answer that is not success, as a stowage error naming the URL the
// way the user gave it (s3://bucket/key) with S3's own Code and Message.
// Only <Code> and <Message> are taken from the error body: S3 also echoes
// the string to sign and the access key id, which have no place in a message.
#ifndef STOWAGE_S3_ERRORS_HPP
#define STOWAGE_S3_ERRORS_HPP

#include <stowage/plugin.hpp>

#include <string>

#include "client.hpp"

namespace stowage_s3 {

// "HTTP 403 SignatureDoesNotMatch: The request signature we calculated ..."
inline std::string answer_text(const Answer& a) {
  std::string text = "HTTP " + std::to_string(a.reply.status);
  if (!a.code.empty()) text += " " + a.code;
  if (!a.message.empty()) text += ": " + a.message;
  if (a.attempts > 1) text += " (after " + std::to_string(a.attempts) + " attempts)";
  return text;
}

// 404 (NoSuchKey, NoSuchBucket, NoSuchUpload) is STOWAGE_NOT_FOUND; the rest
// STOWAGE_IO. 403 says which way out there is.
[[noreturn]] inline void fail_answer(const std::string& shown, const Answer& a) {
  if (a.reply.status == 404) stowage::sdk::fail(STOWAGE_NOT_FOUND, shown + ": " + answer_text(a));
  std::string hint;
  if (a.code == "SignatureDoesNotMatch")
    hint = " (check the secret access key for this endpoint)";
  else if (a.code == "InvalidAccessKeyId")
    hint = " (the endpoint does not know this access key id)";
  else if (a.code == "AccessDenied" || (a.reply.status == 403 && a.code.empty()))
    hint =
        " (the server refuses: credentials, AWS_PROFILE, or AWS_NO_SIGN_REQUEST=YES for a "
        "public bucket)";
  else if (a.reply.status == 301 || a.code == "PermanentRedirect")
    hint = " (the bucket is in another region: set AWS_REGION or the option \"region\")";
  stowage::sdk::fail(STOWAGE_IO, shown + ": " + answer_text(a) + hint);
}

inline bool succeeded(const Answer& a) {
  return a.reply.status >= 200 && a.reply.status < 300 && a.code.empty();
}

}  // namespace stowage_s3

#endif  // STOWAGE_S3_ERRORS_HPP
