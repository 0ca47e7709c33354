// placeholder: removed when the layer has its first source
