#include "server/evaluate_reactor.h"

namespace kiln {

EvaluateReactor::EvaluateReactor() : cancel_(std::make_shared<std::atomic<bool>>(false)) {}

void EvaluateReactor::AttachRun() {
  refs_.fetch_add(1);
  std::lock_guard<std::mutex> lock(mu_);
  ++open_runs_;
}

void EvaluateReactor::Reject(const grpc::Status& status, bool release_run) {
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!finishing_) {
      pending_.clear();
      broken_ = true;
      finish_status_ = status;
    }
    if (release_run) --open_runs_;
    next = NextLocked();
  }
  Start(next);
  if (release_run) Unref();
}

void EvaluateReactor::Send(const v1::EvaluateEvent& event) {
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || finishing_) return;
    pending_.push_back(event);
    next = NextLocked();
  }
  Start(next);
}

void EvaluateReactor::Close(const v1::EvaluateEvent& event) {
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --open_runs_;
    if (!broken_ && !finishing_) {
      pending_.push_back(event);
      closed_ = open_runs_ <= 0;
      next = NextLocked();
    }
  }
  Start(next);
  Unref();  // may delete this
}

void EvaluateReactor::OnWriteDone(bool ok) {
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok && !broken_ && !finishing_) {
      // The client is gone; the run goes on (and is archived) without it.
      broken_ = true;
      pending_.clear();
      finish_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    }
    next = NextLocked();
  }
  Start(next);
}

void EvaluateReactor::OnCancel() {
  cancel_->store(true);
  Next next = Next::kNothing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_ && !finishing_) {
      broken_ = true;
      pending_.clear();
      finish_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    next = NextLocked();
  }
  Start(next);
}

void EvaluateReactor::OnDone() { Unref(); }

EvaluateReactor::Next EvaluateReactor::NextLocked() {
  if (writing_ || finishing_) return Next::kNothing;
  if (!pending_.empty()) {
    writing_event_ = std::move(pending_.front());
    pending_.pop_front();
    writing_ = true;
    return Next::kWrite;
  }
  if (broken_ || closed_) {
    finishing_ = true;
    return Next::kFinish;
  }
  return Next::kNothing;
}

void EvaluateReactor::Start(Next next) {
  // gRPC calls are made outside mu_: their reactions may run on other threads at once.
  // finish_status_ is no longer written once finishing_ is set.
  if (next == Next::kWrite) StartWrite(&writing_event_);
  if (next == Next::kFinish) Finish(finish_status_);
}

void EvaluateReactor::Unref() {
  if (refs_.fetch_sub(1) == 1) delete this;
}

}  // namespace kiln
