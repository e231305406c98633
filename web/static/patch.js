// The patch form: a chosen series file is read into the text box, so the
// form posts it like pasted text (no multipart upload needed).
(function () {
  var file = document.getElementById("mbox-file");
  var box = document.getElementById("mbox");
  if (!file || !box) return;
  file.addEventListener("change", function () {
    if (!file.files || !file.files[0]) return;
    var reader = new FileReader();
    reader.onload = function () { box.value = reader.result; };
    reader.readAsText(file.files[0]);
  });
})();
